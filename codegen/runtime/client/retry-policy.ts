import { Code, ConnectError } from "@connectrpc/connect";

/**
 * When and how the SDK retries a failed call. Only methods whose `idempotency_level` says a
 * repeat is harmless are retried (AIP-194), and only on codes that mean "try again later".
 */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retries off. */
  readonly maxRetries: number;
  /** Delay before the first retry; doubles each time, with up to 25% random jitter. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** Codes retried. UNAVAILABLE always means the request did not take effect. */
  readonly retryableCodes: readonly Code[];
  /** Longest server-asked wait (`retry-after`) honoured; a longer one fails at once. */
  readonly maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  retryableCodes: [Code.Unavailable, Code.ResourceExhausted],
  maxRetryAfterMs: 60_000,
};

/**
 * How long to wait before retry number `attempt` (1-based), or undefined when the error must not
 * be retried. A `retry-after` header (seconds or an HTTP date) from the server wins over backoff.
 */
export function retryDelayMs(
  error: unknown,
  attempt: number,
  policy: RetryPolicy,
  now = Date.now(),
): number | undefined {
  if (attempt > policy.maxRetries) return undefined;
  const connectError = ConnectError.from(error);
  if (!policy.retryableCodes.includes(connectError.code)) return undefined;
  const retryAfter = parseRetryAfter(connectError.metadata.get("retry-after"), now);
  if (retryAfter !== undefined) return retryAfter <= policy.maxRetryAfterMs ? retryAfter : undefined;
  const base = Math.min(policy.initialDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
  return Math.round(base * (1 - Math.random() * 0.25));
}

function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Calls until the call succeeds or the policy says its error must not be retried. */
export async function withRetries<T>(
  call: () => Promise<T>,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const delay = retryDelayMs(error, attempt, policy);
      if (delay === undefined || signal?.aborted) throw error;
      await sleep(delay, signal);
    }
  }
}

/** Waits, unless the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(ConnectError.from(signal.reason ?? new Error("aborted"), Code.Canceled));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(ConnectError.from(signal?.reason ?? new Error("aborted"), Code.Canceled));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
