/**
 * Threads share the event loop with every request: each turn of the loop lets one piece of thread
 * work start (a step's expressions, or one of the engine's database calls), and any other waits
 * for a later turn, after the requests that arrived meanwhile have been read.
 *
 * Each expression evaluation is bounded (dsl/cost-meter.ts), but without this the bounded pieces
 * add up within one turn: four iterations of a thread evaluating up to their limit ran one after
 * the other; and on the embedded database, whose queries run in this process and resolve without
 * waiting for I/O, a whole thread of cheap steps ran in one turn, holding every request for most
 * of a second. A turn with nothing else to do costs microseconds, so a thread alone is not slowed
 * (bench/engine.bench.ts measured no difference on either database).
 */

/** Whether the current turn has let its piece of thread work in; cleared at the next turn. */
let taken = false;

/** Resolves at once if the current turn has let no thread work in yet, else on a later turn. */
export async function shareEventLoop(): Promise<void> {
  while (taken) await new Promise<void>((resolve) => setImmediate(resolve));
  taken = true;
  // Scheduled before the callback of any later waiter: the next turn clears it first, then lets one waiter in.
  setImmediate(() => (taken = false)).unref();
}
