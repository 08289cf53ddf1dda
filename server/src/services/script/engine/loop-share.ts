/**
 * Threads share the event loop with every request: a step starts only while the current turn of
 * the loop is young, and once a turn has run TURN_SLICE_MS since its first step started, further
 * steps wait for a later turn, so that the requests that arrived meanwhile are served first.
 *
 * Each expression evaluation is bounded (dsl/cost-meter.ts), but without this the bounded pieces
 * add up: four iterations of one thread, each evaluating up to its limit, ran one after the other
 * in one turn; and on the embedded database, whose queries resolve without waiting for I/O, a
 * whole thread of cheap steps ran in one turn, holding requests for most of a second.
 */
export const TURN_SLICE_MS = 10;

/** When the first step of the current turn started; cleared at the start of the next turn. */
let turnStarted: number | undefined;

/** Resolves at once while the current turn is young, else on a later turn. */
export async function shareEventLoop(): Promise<void> {
  for (;;) {
    const now = performance.now();
    if (turnStarted === undefined) {
      turnStarted = now;
      // Scheduled before any waiter's callback: the next turn clears it first, then lets one waiter in.
      setImmediate(() => (turnStarted = undefined)).unref();
      return;
    }
    if (now - turnStarted < TURN_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
