import { Code, ConnectError } from "@connectrpc/connect";
import type { Dispatcher } from "undici";
import { readBodyUpTo } from "../net/capped-body.js";
import { createGuardedDispatcher, privateHostKind, privateNetworkErrorOf } from "../net/private-network.js";

/** How the embedding and rerank clients reach their endpoint. */
export interface EndpointOptions {
  /** Bearer token; never written into an error. */
  readonly apiKey?: string | undefined;
  /** The operator's --allow-private-network; false routes every request through the outbound-address guard. */
  readonly allowPrivateNetwork?: boolean;
  /** Limit on one request, default 30 s. */
  readonly timeoutMs?: number;
  /** Tests pass their own. */
  readonly fetch?: typeof fetch;
  /** Where connections are made; default the guarded dispatcher. */
  readonly dispatcher?: Dispatcher;
}

const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * POSTs JSON to an operator-configured endpoint and answers the parsed JSON, or a ConnectError a
 * caller can act on: the endpoint's refusals of the request (400, 413, 422) are INVALID_ARGUMENT,
 * its refusal of the credentials or the model (401, 403, 404) FAILED_PRECONDITION (the operator's
 * configuration is wrong), throttling, server errors, timeouts and unreachable hosts UNAVAILABLE.
 * Messages name the endpoint by origin and path only, never the key.
 */
export function createEndpointCaller(
  options: EndpointOptions,
): (url: string, body: unknown, what: string, signal?: AbortSignal) => Promise<unknown> {
  const fetchFn = options.fetch ?? fetch;
  const allowPrivateNetwork = options.allowPrivateNetwork ?? false;
  const dispatcher = options.dispatcher ?? createGuardedDispatcher({ allowPrivateNetwork });
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (url, body, what, signal) => {
    const parsed = new URL(url);
    const where = `${parsed.origin}${parsed.pathname}`;
    const refused = allowPrivateNetwork ? undefined : privateHostKind(parsed.hostname);
    if (refused !== undefined)
      throw new ConnectError(
        `the ${what} endpoint ${where} is ${refused}, which this server does not connect to (set --allow-private-network for development)`,
        Code.FailedPrecondition,
      );
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      dispatcher,
    };
    let status: number;
    let text: string;
    try {
      const response = await fetchFn(url, init);
      status = response.status;
      const refuse = () =>
        new ConnectError(`the ${what} endpoint ${where} answered more than 64 MiB`, Code.Unavailable);
      text = (await readBodyUpTo(response, MAX_ANSWER_BYTES, refuse)).toString("utf8");
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof ConnectError) throw error;
      if (timeout.aborted)
        throw new ConnectError(`the ${what} endpoint ${where} did not answer within ${timeoutMs} ms`, Code.Unavailable);
      const guard = privateNetworkErrorOf(error);
      if (guard) throw new ConnectError(`the ${what} endpoint ${where}: ${guard.message}`, Code.FailedPrecondition);
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new ConnectError(`the ${what} endpoint ${where} is unreachable: ${reason}`, Code.Unavailable);
    }
    if (status < 200 || status > 299)
      throw new ConnectError(
        `the ${what} endpoint ${where} answered ${status}: ${upstreamMessage(text)}`,
        statusCode(status),
      );
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ConnectError(
        `the ${what} endpoint ${where} answered something that is not JSON: ${snippet(text)}`,
        Code.Unavailable,
      );
    }
  };
}

function statusCode(status: number): Code {
  if (status === 401 || status === 403 || status === 404) return Code.FailedPrecondition;
  if (status === 400 || status === 413 || status === 422) return Code.InvalidArgument;
  return Code.Unavailable;
}

/** OpenAI's `{"error": {"message"}}`, TEI's `{"error": "..."}`, or the text itself. */
function upstreamMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error = parsed.error;
      if (typeof error === "string") return snippet(error);
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string")
        return snippet(error.message);
    }
  } catch {
    // not JSON: show the text
  }
  return snippet(text);
}

function snippet(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return "(empty body)";
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}
