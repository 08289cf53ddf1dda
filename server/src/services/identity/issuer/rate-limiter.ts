import { createHash } from "node:crypto";
import { lt, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { identityRateLimits, type JsonObject } from "../identity-schema.js";
import type { PoolRef } from "../pool-store.js";

export type BudgetName = "token" | "login" | "signup" | "recover" | "reset" | "verify";

export interface RateBudget {
  readonly requests: number;
  readonly windowSeconds: number;
}

/** The admin plane's documented defaults of `policies.rate_limits`. */
export const DEFAULT_BUDGETS: Readonly<Record<BudgetName, RateBudget>> = {
  token: { requests: 600, windowSeconds: 60 },
  login: { requests: 10, windowSeconds: 300 },
  signup: { requests: 30, windowSeconds: 3600 },
  recover: { requests: 5, windowSeconds: 3600 },
  reset: { requests: 10, windowSeconds: 3600 },
  verify: { requests: 30, windowSeconds: 3600 },
};

/** A pool's budget, from `policies.rate_limits.<name>` ({requests, window_seconds}) or the default. */
export function budgetOf(policies: JsonObject, name: BudgetName): RateBudget {
  const limits = policies.rate_limits;
  const entry = typeof limits === "object" && limits !== null ? (limits as JsonObject)[name] : undefined;
  if (typeof entry !== "object" || entry === null) return DEFAULT_BUDGETS[name];
  const { requests, window_seconds: windowSeconds } = entry as JsonObject;
  const positive = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 1;
  return positive(requests) && positive(windowSeconds) ? { requests, windowSeconds: Math.min(windowSeconds, 86_400) } : DEFAULT_BUDGETS[name];
}

/** What one request is counted against: the client's address, and the e-mail address it names. */
export interface RateSubjects {
  readonly ip: string;
  readonly email?: string;
}

export interface RateLimiter {
  /** Counts the request; answers how long to wait when any of its subjects is over budget. */
  hit(pool: PoolRef, name: BudgetName, budget: RateBudget, subjects: RateSubjects): Promise<{ readonly retryAfterSeconds: number } | undefined>;
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
 * Fixed-window counters in `identity_rate_limits`: one upsert per request counts every subject
 * and answers the new counts, so all processes on the database share each budget. Fixed windows
 * allow a burst of twice the budget across a window edge, an accepted imprecision for limits
 * that stop guessing rather than meter use. E-mail addresses are counted by their hash.
 *
 * A large budget (the token endpoint's, per client address) would otherwise make one row the
 * point every request of a busy client serialises on: its hits are counted in memory and written
 * in batches of 1% of the budget or every 200 ms, so each process may overshoot by about that
 * share. Budgets under 100 requests, the ones that stop password guessing, are counted exactly.
 */
export function createRateLimiter(db: Database, options: { readonly now?: () => number; readonly onSweepError?: (error: unknown) => void } = {}): RateLimiter {
  const now = options.now ?? Date.now;
  let sinceSweep = 0;
  const local = new Map<string, LocalCount>();

  /** Adds hits to counters and answers their new totals, in one statement. */
  async function add(counts: readonly { readonly key: string; readonly hits: number; readonly expiresAt: number }[]): Promise<number[]> {
    const rows = await db
      .insert(identityRateLimits)
      .values(counts.map(({ key, hits, expiresAt }) => ({ key, hits, expiresAt })))
      .onConflictDoUpdate({ target: identityRateLimits.key, set: { hits: sql`${identityRateLimits.hits} + excluded.hits` } })
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
    if (!count.writing && (count.pending >= batch || at - count.lastWriteAt >= BATCH_MAX_AGE_MS || count.known === 0)) await write(count);
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
    async hit(pool, name, budget, subjects) {
      const at = now();
      const windowMs = budget.windowSeconds * 1000;
      const windowStart = Math.floor(at / windowMs) * windowMs;
      const keyOf = (subject: string) => `${pool.poolId}:${name}:${subject}:${windowStart}`;
      const keys = [keyOf(`ip:${subjects.ip}`)];
      if (subjects.email !== undefined) keys.push(keyOf(`email:${createHash("sha256").update(subjects.email.trim().toLowerCase()).digest("base64url")}`));
      const expiresAt = windowStart + windowMs;
      const batch = Math.floor(budget.requests * BATCH_SHARE);
      const totals =
        batch <= 1 ? await add(keys.map((key) => ({ key, hits: 1, expiresAt }))) : await Promise.all(keys.map((key) => batched(key, expiresAt, batch, at)));
      if (++sinceSweep >= SWEEP_EVERY) sweep(at);
      if (totals.every((hits) => hits <= budget.requests)) return undefined;
      return { retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - at) / 1000)) };
    },
  };
}
