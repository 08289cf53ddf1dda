/**
 * How the run of a thread stops short of completing: each is thrown from deep inside the step
 * tree and caught once by the worker, which records it.
 */

/** The thread must wait until `runAfter` (a `wait` step) or for a person (`approval`). */
export class Suspension extends Error {
  override name = "Suspension";
  constructor(
    readonly reason: "wait" | "approval",
    /** Epoch ms at which the thread becomes runnable again; 0 = only when resumed. */
    readonly runAfter: number,
    readonly stepPath: string,
  ) {
    super(`suspended at ${stepPath} (${reason})`);
  }
}

/** A step failed and nothing tolerated it: the thread fails. */
export class StepFailure extends Error {
  override name = "StepFailure";
  constructor(
    message: string,
    readonly stepPath: string,
    readonly stepName: string,
  ) {
    super(message);
  }
}

/** A cancel was asked for: no further step starts. */
export class Cancellation extends Error {
  override name = "Cancellation";
  constructor(
    readonly reason: string,
    readonly stepPath: string,
  ) {
    super(`cancelled${reason ? `: ${reason}` : ""}`);
  }
}

/** This worker lost the thread's lease (another process took it over): stop writing at once. */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}
