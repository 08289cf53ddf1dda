import { DrizzleQueryError } from "drizzle-orm";

/** What a step or a thread records as `error` when the failure is not the script's doing. */
export const INTERNAL_FAILURE = "internal error";

/** A failure as a step or thread records it, and, when it was internal, what to log of it. */
export interface DescribedFailure {
  /** The `error` text clients read. */
  readonly text: string;
  /** Set for an internal failure: its detail for the server log. */
  readonly internal?: Readonly<Record<string, unknown>>;
}

/**
 * A step's `error` says what went wrong in the script's terms: a tool's message, an expression's,
 * a `fail` step's. A failure of the platform itself (a database error, a programming error) says
 * only "internal error": its text can quote SQL and the statement's parameters, which hold step
 * inputs and so the thread's environment. Its detail goes to the log instead, without parameters.
 * The text is stored as text, which cannot hold U+0000: a NUL shows as U+FFFD.
 */
export function describeFailure(error: unknown): DescribedFailure {
  const chain = causeChain(error);
  // A database error anywhere below: a tool's message may repeat it. A programming error only
  // when nothing caught it: fetch, for one, fails with a TypeError that tools explain in their own words.
  const database = chain.findIndex(isDatabaseError);
  if (database !== -1) return { text: INTERNAL_FAILURE, internal: logDetail(chain.slice(database)) };
  if (error instanceof TypeError || error instanceof ReferenceError)
    return { text: INTERNAL_FAILURE, internal: logDetail(chain) };
  const message = error instanceof Error ? error.message : String(error);
  return { text: message.replaceAll("\u0000", "\uFFFD") };
}

/** What to log of a failure: its internal detail, or its text. */
export function failureLogFields(error: unknown): Record<string, unknown> {
  const failure = describeFailure(error);
  return failure.internal ? { error: failure.text, ...failure.internal } : { error: failure.text };
}

/** The error and its causes, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let cause = error;
    cause !== undefined && chain.length < 8 && !chain.includes(cause);
    cause = cause instanceof Error ? cause.cause : undefined
  )
    chain.push(cause);
  return chain;
}

/** An error of the database or its driver: drizzle's query error, or a server error (with a SQLSTATE). */
function isDatabaseError(error: unknown): boolean {
  if (error instanceof DrizzleQueryError) return true;
  const fields = error as { severity?: unknown; code?: unknown } | null;
  return error instanceof Error && typeof fields?.severity === "string" && typeof fields.code === "string";
}

/**
 * The internal error and what caused it, for the log: a query's text (its placeholders, never its
 * parameters), a database error's SQLSTATE and primary message (not its detail or position,
 * which quote values), a programming error's message and stack. The errors above the first
 * internal one are left out: their messages repeat its text, parameters included.
 */
function logDetail(chain: readonly unknown[]): Record<string, unknown> {
  const causes = chain.map((cause) => {
    if (cause instanceof DrizzleQueryError) return { name: "DrizzleQueryError", query: cause.query };
    if (!(cause instanceof Error)) return { name: typeof cause };
    const { severity, code } = cause as { severity?: unknown; code?: unknown };
    if (typeof severity === "string" && typeof code === "string")
      return { name: cause.name, code, message: cause.message };
    return { name: cause.name, message: cause.message, stack: cause.stack };
  });
  return { cause: causes };
}
