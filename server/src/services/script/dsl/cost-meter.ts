/**
 * The bound on one evaluation moment of a thread's expressions (a `when`, a template, the values
 * of a `set`, the branch conditions of a decide): a cost counted while CEL runs, in the spirit of
 * cel-go's runtime cost tracking, plus a wall-clock ceiling as a safety net.
 *
 * Expressions run on the event loop, synchronously: while one runs, no request of any tenant is
 * served. CEL has no loops, but nested comprehensions multiply (three nested `all` over 300 items
 * are 27 million iterations, seconds of work), so every evaluation is charged as it runs:
 *
 * - every node of the expression once, and every node of a comprehension's body once per
 *   iteration (counted statically when the expression is compiled, see cost-instrumentation.ts);
 *   a list or map literal counts `CONTAINER_COST` more, and so does each list or object of the
 *   bindings when it is first read (values are converted from JSON as they are read, cel-json.ts);
 * - every function call, in addition, one unit per 10 characters of the strings and bytes and per
 *   10 elements of the lists and maps it reads and of the string or list it returns (cel-go's
 *   traversal factor of 0.1), so that work proportional to the size of the data is paid for.
 *
 * Past `cost` units the evaluation stops at once and its step fails. The cost of an expression
 * depends only on the expression and its bindings, so a resumed thread fails or succeeds the
 * same way. The clock is read every few thousand units: an evaluation still running after
 * `timeMs` stops too, for whatever the count does not see (a slow regular expression, a large
 * equality); that stop depends on the machine's load, which is why it is set well above what
 * the cost limit allows on an idle server.
 *
 * Why on the event loop rather than in a worker thread (as json.transform does, see
 * tools/cel-worker-pool.ts): a worker needs a structured copy of the bindings each time (step
 * outputs of megabytes are common) and a round trip per evaluation, for expressions that nearly
 * always take microseconds; bench/expression-cost.bench.ts measures both, and the numbers are in
 * bench/RESULTS.md. The count costs a few per cent instead, and keeps evaluation synchronous.
 */

export interface ExpressionLimits {
  /** Cost units one evaluation moment may spend. */
  readonly cost: number;
  /** Wall-clock ceiling of one evaluation moment, in milliseconds. */
  readonly timeMs: number;
}

/** About 10–30 ms of evaluation on one core of a small server (see bench/RESULTS.md). */
export const DEFAULT_EXPRESSION_COST_LIMIT = 100_000;
/** The safety net: an evaluation never holds the event loop much longer than this. */
export const DEFAULT_EXPRESSION_TIME_LIMIT_MS = 30;

export const DEFAULT_EXPRESSION_LIMITS: ExpressionLimits = {
  cost: DEFAULT_EXPRESSION_COST_LIMIT,
  timeMs: DEFAULT_EXPRESSION_TIME_LIMIT_MS,
};

/**
 * Extra units for making a list or map (a literal, or a JSON list or object read from the
 * bindings): allocating it costs a few node evaluations (bench/expression-cost.bench.ts).
 */
export const CONTAINER_COST = 10;

/** How many units may pass between two readings of the clock. */
const CLOCK_EVERY = 4_096;

/** Thrown through CEL's evaluator to stop it at once; the evaluator turns it into a step error. */
export class ExpressionLimitExceeded extends Error {
  override name = "ExpressionLimitExceeded";
}

/** The units and time spent by one evaluation moment, against its limits. */
export class CostMeter {
  private spent = 0;
  private nextClock = CLOCK_EVERY;
  /** Time spent in earlier runs of this meter, and when the current run started. */
  private elapsedBefore = 0;
  private runStarted = 0;
  /** Set once a limit is passed; every later charge fails the same way. */
  private exceeded: ExpressionLimitExceeded | undefined;

  constructor(readonly limits: ExpressionLimits = DEFAULT_EXPRESSION_LIMITS) {}

  get units(): number {
    return this.spent;
  }

  /** Adds `units`; throws ExpressionLimitExceeded past a limit. */
  charge(units: number): void {
    if (this.exceeded !== undefined) throw this.exceeded;
    this.spent += units;
    if (this.spent > this.limits.cost) {
      this.exceeded = new ExpressionLimitExceeded(`it exceeded the cost limit of ${this.limits.cost} units`);
      throw this.exceeded;
    }
    if (this.spent >= this.nextClock) {
      this.nextClock = this.spent + CLOCK_EVERY;
      this.checkClock();
    }
  }

  /** Runs `evaluate` with this meter as the one CEL's functions charge (evaluation is synchronous). */
  run<T>(evaluate: () => T): T {
    running.push(this);
    this.runStarted = performance.now();
    try {
      return evaluate();
    } finally {
      this.elapsedBefore += performance.now() - this.runStarted;
      running.pop();
    }
  }

  /** The limit passed, if any: CEL may have turned the throw into an error value. */
  get failure(): ExpressionLimitExceeded | undefined {
    return this.exceeded;
  }

  private checkClock(): void {
    const elapsed = this.elapsedBefore + performance.now() - this.runStarted;
    if (elapsed > this.limits.timeMs) {
      this.exceeded = new ExpressionLimitExceeded(`it ran longer than the time limit of ${this.limits.timeMs} ms`);
      throw this.exceeded;
    }
  }
}

/** The meters of the evaluations running now, innermost last (evaluation is synchronous). */
const running: CostMeter[] = [];

/** Charges the meter of the evaluation running now; outside one (compile-time folding) nothing. */
export function chargeActive(units: number): void {
  running[running.length - 1]?.charge(units);
}
