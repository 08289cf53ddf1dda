/**
 * Why a tool call failed, as a code the thread runner can act on:
 * - `invalid_input`: the call's input is wrong; retrying the same input fails again.
 * - `not_found`: no tool has the name.
 * - `unavailable`: a dependency is down or throttling (upstream 429/5xx, connection refused);
 *   a retry may succeed.
 * - `timeout`: the call ran past its limit.
 * - `cancelled`: the caller aborted the call (the thread was cancelled).
 * - `failed`: anything else; the message says what.
 */
export type ToolErrorReason = "invalid_input" | "not_found" | "unavailable" | "timeout" | "cancelled" | "failed";

export interface ToolErrorOptions {
  readonly cause?: unknown;
  /** HTTP status of the upstream answer that caused the failure, when there was one. */
  readonly upstreamStatus?: number;
}

/** The one error type tool calls fail with; the step's error is `message`. */
export class ToolError extends Error {
  override name = "ToolError";
  readonly reason: ToolErrorReason;
  readonly upstreamStatus: number | undefined;

  constructor(reason: ToolErrorReason, message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.upstreamStatus = options.upstreamStatus;
  }

  /** Whether running the same call again may succeed. */
  get retryable(): boolean {
    return this.reason === "unavailable" || this.reason === "timeout";
  }
}

export function invalidInput(message: string): ToolError {
  return new ToolError("invalid_input", message);
}

/** An error of any kind as a ToolError: non-ToolErrors become `failed` with their message. */
export function toToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError("failed", message, { cause: error });
}
