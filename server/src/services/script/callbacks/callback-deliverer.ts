import { toJson } from "@bufbuild/protobuf";
import { eq } from "drizzle-orm";
import { ThreadSchema } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { startPollLoop, type PollLoop } from "../../../background/poll-loop.js";
import type { Database } from "../../../db/database.js";
import { organizations } from "../../../auth/auth-schema.js";
import { threads } from "../script-schema.js";
import { TERMINAL } from "../threads/thread-store.js";
import { toThreadMessage } from "../threads/thread-messages.js";
import type { ThreadSignals } from "../threads/thread-signals.js";
import { createCallbackOutbox, type CallbackRow } from "./callback-outbox.js";
import type { CallbackSigningKeys } from "./callback-signing-keys.js";
import { webhookHeaders } from "./webhook-signature.js";

/**
 * Waits before each retry, after the first attempt: the schedule Standard Webhooks suggests
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), eight attempts over about 28 hours.
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;

/** How one POST went: the status, or no status when the request itself failed. */
export interface PostOutcome {
  readonly status: number;
}

/** Sends one POST; the server's default goes through the private-network guard. */
export type CallbackPoster = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<PostOutcome>;

export interface CallbackDelivererOptions {
  readonly db: Database;
  readonly signals: ThreadSignals;
  readonly keys: CallbackSigningKeys;
  readonly post: CallbackPoster;
  readonly now?: () => number;
  /** Safety-net poll for due retries and deliveries queued by other processes. */
  readonly pollMs?: number;
  /** Deliveries in flight at once. */
  readonly concurrency?: number;
  /** Longest a receiver gets to answer. */
  readonly attemptTimeoutMs?: number;
  /** Random spread of retry times, so receivers coming back up are not hit all at once. */
  readonly jitter?: () => number;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export interface CallbackDeliverer {
  start(): void;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * Delivers queued thread callbacks: claims due rows, posts the signed final Thread, and records
 * the outcome (delivered, retry later, or given up). Several processes share the queue safely;
 * an attempt cut short by a crash is retried when its claim expires.
 */
export function createCallbackDeliverer(options: CallbackDelivererOptions): CallbackDeliverer {
  const outbox = createCallbackOutbox(options.db);
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 1_000;
  const concurrency = options.concurrency ?? 8;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 15_000;
  const jitter = options.jitter ?? Math.random;
  const log = options.log ?? (() => {});
  const inFlight = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let loop: PollLoop | undefined;
  let unsubscribe: (() => void) | undefined;

  /** The body of a delivery: Standard Webhooks' `{type, timestamp, data}` around the final Thread. */
  async function bodyOf(callback: CallbackRow): Promise<string | undefined> {
    const [row] = await options.db
      .select({ thread: threads, orgName: organizations.name })
      .from(threads)
      .innerJoin(organizations, eq(organizations.id, threads.orgId))
      .where(eq(threads.id, callback.threadId));
    // Resumed since it ended: that end is superseded, and the next end queues its own delivery.
    if (!row || !TERMINAL.has(row.thread.status)) return undefined;
    const data = toJson(ThreadSchema, toThreadMessage(row.thread, row.orgName));
    return JSON.stringify({
      type: `thread.${row.thread.status}`,
      timestamp: new Date(row.thread.finishedAt || now()).toISOString(),
      data,
    });
  }

  async function attempt(callback: CallbackRow): Promise<void> {
    let body = callback.body;
    if (body === null) {
      body = (await bodyOf(callback)) ?? null;
      if (body === null)
        return outbox.attemptFailed(callback.id, {
          error: "superseded: the thread was resumed before delivery",
          statusCode: 0,
          nextAttemptAt: undefined,
        });
      await outbox.saveBody(callback.id, body);
    }
    const keys = await options.keys.get(callback.orgId);
    const headers = {
      "content-type": "application/json",
      "user-agent": "platform-callbacks/1",
      ...webhookHeaders(
        { id: callback.id, timestamp: Math.floor(now() / 1000), body },
        keys.previous ? [keys.current, keys.previous] : [keys.current],
      ),
    };
    let status = 0;
    let error = "";
    try {
      status = (
        await options.post(
          callback.url,
          headers,
          body,
          AbortSignal.any([shutdown.signal, AbortSignal.timeout(attemptTimeoutMs)]),
        )
      ).status;
      if (status >= 200 && status < 300) return outbox.delivered(callback.id, now(), status);
      error = `the receiver answered ${status}`;
    } catch (cause) {
      error =
        cause instanceof Error
          ? cause.cause instanceof Error
            ? `${cause.message}: ${cause.cause.message}`
            : cause.message
          : String(cause);
    }
    // 410 Gone is the receiver's way of saying "stop", as Standard Webhooks defines it.
    const delay = status === 410 ? undefined : RETRY_DELAYS_MS[callback.attempts - 1];
    const nextAttemptAt = delay === undefined ? undefined : now() + Math.round(delay * (0.9 + 0.2 * jitter()));
    log(nextAttemptAt === undefined ? "callback delivery given up" : "callback delivery failed; will retry", {
      threadId: callback.threadId,
      webhookId: callback.id,
      attempt: callback.attempts,
      error,
    });
    await outbox.attemptFailed(callback.id, { error, statusCode: status, nextAttemptAt });
  }

  async function pass(): Promise<void> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    // The claim outlives the longest attempt, so a slow receiver is never posted twice at once.
    for (const callback of await outbox.claim(now(), attemptTimeoutMs * 2, free)) {
      const running: Promise<void> = attempt(callback)
        .catch((error: unknown) => log("callback delivery crashed", { webhookId: callback.id, error: String(error) }))
        .finally(() => {
          inFlight.delete(running);
          loop?.wake();
        });
      inFlight.add(running);
    }
  }

  return {
    start() {
      loop = startPollLoop(pass, {
        pollMs,
        onError: (error) => log("claiming callbacks failed", { error: String(error) }),
      });
      unsubscribe = options.signals.onCallbacksDue(() => loop?.wake());
    },
    async stop() {
      unsubscribe?.();
      shutdown.abort();
      await loop?.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}
