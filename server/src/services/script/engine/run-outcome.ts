/**
 * How the run of a thread stops short of completing: each is thrown from deep inside the step
 * tree and caught once by the worker, which records it.
 */

/**
 * The thread must wait until `runAfter` (a `wait` step, a retry's backoff) or for a person
 * (`approval`). The worker releases it meanwhile: a waiting thread holds no worker slot and no lease.
 */
export class Suspension extends Error {
  override name = "Suspension";
  constructor(
    readonly reason: "wait" | "retry" | "approval",
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

/**
 * What a container step throws when some of its branches or iterations stopped short: a failure
 * (or a lost lease, a cancel) before any suspension, since it ends the step; else a pause for
 * approval, since the thread must show PAUSED until a person answers; else the suspension due
 * first, so that a short wait in one branch is not held up by a long backoff in another.
 */
export function containerStop(errors: readonly unknown[]): unknown {
  const failure = errors.find((error) => !(error instanceof Suspension));
  if (failure !== undefined) return failure;
  const suspensions = errors as readonly Suspension[];
  return (
    suspensions.find((s) => s.reason === "approval") ??
    suspensions.reduce((first, s) => (s.runAfter < first.runAfter ? s : first))
  );
}
