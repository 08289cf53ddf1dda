import { createHash } from "node:crypto";
import { lt, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { identityRateLimits, type JsonObject } from "../identity-schema.js";
import type { PoolRef } from "../pool-store.js";

export type BudgetName =
  | "token"
  | "login"
  | "login_email"
  | "login_ip"
  | "signup"
  | "recover"
  | "recover_email"
  | "recover_ip"
  | "reset"
  | "verify";

export interface RateBudget {
  readonly requests: number;
  readonly windowSeconds: number;
}

/**
 * The admin plane's documented defaults of `policies.rate_limits`. Password checks are counted
 * three ways so that nobody can lock an account's owner out: tightly per e-mail address and client
 * address together (`login`), so guessing from one address stops soon without touching anyone
 * else; per client address (`login_ip`), against one address trying many accounts; and loosely
 * per e-mail address from everywhere (`login_email`), ten addresses' worth, against guessing
 * spread over many addresses. Recovery mails are counted the same three ways, so that nobody can
 * spend an account's recovery budget for its owner either.
 */
export const DEFAULT_BUDGETS: Readonly<Record<BudgetName, RateBudget>> = {
  token: { requests: 600, windowSeconds: 60 },
  login: { requests: 10, windowSeconds: 300 },
  login_email: { requests: 100, windowSeconds: 300 },
  login_ip: { requests: 30, windowSeconds: 300 },
  signup: { requests: 30, windowSeconds: 3600 },
  recover: { requests: 5, windowSeconds: 3600 },
  recover_email: { requests: 20, windowSeconds: 3600 },
  recover_ip: { requests: 20, windowSeconds: 3600 },
  reset: { requests: 10, windowSeconds: 3600 },
  verify: { requests: 30, windowSeconds: 3600 },
};

/** A pool's budget, from `policies.rate_limits.<name>` ({requests, window_seconds}) or the default. */
export function budgetOf(policies: JsonObject, name: BudgetName): RateBudget {
  const limits = policies.rate_limits;
  const entry = typeof limits === "object" && limits !== null ? (limits as JsonObject)[name] : undefined;
  if (typeof entry !== "object" || entry === null) return DEFAULT_BUDGETS[name];
  const { requests, window_seconds: windowSeconds } = entry as JsonObject;
  const positive = (value: unknown): value is number =>
    typeof value === "number" && Number.isInteger(value) && value >= 1;
  return positive(requests) && positive(windowSeconds)
    ? { requests, windowSeconds: Math.min(windowSeconds, 86_400) }
    : DEFAULT_BUDGETS[name];
}

/** What a counter counts requests of: a client address, an e-mail address, or the two together. */
export type RateSubject =
  { readonly ip: string; readonly email?: string } | { readonly ip?: string; readonly email: string };

/** One counter a request is counted against. */
export interface RateCount {
  readonly name: BudgetName;
  readonly budget: RateBudget;
  readonly subject: RateSubject;
}

export interface RateLimiter {
  /** Counts the request against every counter; answers how long to wait when any of them is over budget. */
  hit(pool: PoolRef, counts: readonly RateCount[]): Promise<{ readonly retryAfterSeconds: number } | undefined>;
}

/** Expired windows are swept every this many hits of one process, in the background of a request. */
const SWEEP_EVERY = 500;
/** A large budget is counted in batches of this share of it (per process), at least this often. */
const BATCH_SHARE = 0.01;
const BATCH_MAX_AGE_MS = 200;

/** What one process knows of one counter between its writes. */
interface LocalCount {
  readonly key: string;
  readonly expiresAt: number;
  /** The shared count as of this process's last write. */
  known: number;
  /** Hits counted here and not written yet. */
  pending: number;
  lastWriteAt: number;
  writing: Promise<void> | undefined;
}

/**
 * Fixed-window counters in `identity_rate_limits`: one upsert per call counts the request against
 * every counter and answers the new counts, so all processes on the database share each budget. Fixed windows
 * allow a burst of twice the budget across a window edge, an accepted imprecision for limits
 * that stop guessing rather than meter use. E-mail addresses are counted by their hash.
 *
 * A large budget (the token endpoint's, per client address) would otherwise make one row the
 * point every request of a busy client serialises on: its hits are counted in memory and written
 * in batches of 1% of the budget or every 200 ms, so each process may overshoot by about that
 * share. Budgets under 200 requests, the ones that stop password guessing, are counted exactly.
 */
export function createRateLimiter(
  db: Database,
  options: { readonly now?: () => number; readonly onSweepError?: (error: unknown) => void } = {},
): RateLimiter {
  const now = options.now ?? Date.now;
  let sinceSweep = 0;
  const local = new Map<string, LocalCount>();

  /** Adds hits to counters and answers their new totals, in one statement. */
  async function add(
    counts: readonly { readonly key: string; readonly hits: number; readonly expiresAt: number }[],
  ): Promise<number[]> {
    const rows = await db
      .insert(identityRateLimits)
      .values(counts.map(({ key, hits, expiresAt }) => ({ key, hits, expiresAt })))
      .onConflictDoUpdate({
        target: identityRateLimits.key,
        set: { hits: sql`${identityRateLimits.hits} + excluded.hits` },
      })
      .returning({ key: identityRateLimits.key, hits: identityRateLimits.hits });
    return counts.map(({ key }) => rows.find((row) => row.key === key)?.hits ?? 0);
  }

  function write(count: LocalCount): Promise<void> {
    const hits = count.pending;
    count.pending = 0;
    count.lastWriteAt = now();
    count.writing = add([{ key: count.key, hits, expiresAt: count.expiresAt }]).then(
      ([total]) => {
        count.known = total!;
        count.writing = undefined;
      },
      (error: unknown) => {
        count.pending += hits;
        count.writing = undefined;
        throw error;
      },
    );
    return count.writing;
  }

  /** Counts one hit in memory; writes the batch when it is due. Answers the count as now known. */
  async function batched(key: string, expiresAt: number, batch: number, at: number): Promise<number> {
    let count = local.get(key);
    if (!count || count.expiresAt <= at) {
      if (local.size >= 10_000) local.clear();
      count = { key, expiresAt, known: 0, pending: 0, lastWriteAt: at, writing: undefined };
      local.set(key, count);
    }
    count.pending++;
    if (!count.writing && (count.pending >= batch || at - count.lastWriteAt >= BATCH_MAX_AGE_MS || count.known === 0))
      await write(count);
    return count.known + count.pending;
  }

  function sweep(at: number) {
    sinceSweep = 0;
    db.delete(identityRateLimits)
      .where(lt(identityRateLimits.expiresAt, at))
      .then(
        () => undefined,
        (error: unknown) => options.onSweepError?.(error),
      );
  }

  return {
    async hit(pool, counts) {
      const at = now();
      const windows = counts.map(({ name, budget, subject }) => {
        const windowMs = budget.windowSeconds * 1000;
        const windowStart = Math.floor(at / windowMs) * windowMs;
        const key = `${pool.poolId}:${name}:${subjectKey(subject)}:${windowStart}`;
        return { key, expiresAt: windowStart + windowMs, budget, batch: Math.floor(budget.requests * BATCH_SHARE) };
      });
      // The exact counters in one statement; the batched ones in memory, written when due.
      const exact = windows.filter(({ batch }) => batch <= 1);
      const exactTotals =
        exact.length === 0 ? [] : await add(exact.map(({ key, expiresAt }) => ({ key, hits: 1, expiresAt })));
      const totals = await Promise.all(
        windows.map((window) =>
          window.batch <= 1
            ? exactTotals[exact.indexOf(window)]!
            : batched(window.key, window.expiresAt, window.batch, at),
        ),
      );
      if (++sinceSweep >= SWEEP_EVERY) sweep(at);
      const waits = windows.flatMap(({ expiresAt, budget }, i) =>
        totals[i]! > budget.requests ? [Math.max(1, Math.ceil((expiresAt - at) / 1000))] : [],
      );
      return waits.length === 0 ? undefined : { retryAfterSeconds: Math.max(...waits) };
    },
  };
}

/** E-mail addresses are counted by their hash, so the table holds no address. */
function subjectKey(subject: RateSubject): string {
  const parts: string[] = [];
  if (subject.email !== undefined)
    parts.push(`email:${createHash("sha256").update(subject.email.trim().toLowerCase()).digest("base64url")}`);
  if (subject.ip !== undefined) parts.push(`ip:${subject.ip}`);
  return parts.join("+");
}
