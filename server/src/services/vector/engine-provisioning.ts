import { randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import type { Database } from "../../db/database.js";
import { startPollLoop, type PollLoop } from "../../background/poll-loop.js";
import { engineStore } from "./engine-store.js";
import type { VectorDbHost } from "./vector-db-host.js";
import type { DatabaseRow, EngineRow } from "./vector-schema.js";

export interface ProvisioningOptions {
  readonly db: Database;
  readonly host: VectorDbHost;
  readonly now?: () => number;
  /** How long a claim holds; another process takes the engine over once it lapses. */
  readonly leaseMs?: number;
  /** Failures before the engine ends in ERROR; the ones before are retried with a growing delay. */
  readonly maxAttempts?: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * Provisioning of auto engines, a durable step any server process can run: PENDING -> PROVISIONING
 * -> ACTIVE, or ERROR with error_message after `maxAttempts` failures. The engine row is the job:
 * a claim leases it (FOR UPDATE SKIP LOCKED, so two processes never work on one engine), and a
 * lapsed lease is taken over after a crash. Creating the database is idempotent, so a step that
 * died half-way is simply run again.
 */
export class EngineProvisioning {
  readonly #db: Database;
  readonly #host: VectorDbHost;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #maxAttempts: number;
  readonly #onError: (error: unknown) => void;
  readonly #owner = `vector-provisioning:${randomUUID()}`;
  #loop: PollLoop | undefined;

  constructor(options: ProvisioningOptions) {
    this.#db = options.db;
    this.#host = options.host;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = options.leaseMs ?? 60_000;
    this.#maxAttempts = options.maxAttempts ?? 3;
    this.#onError = options.onError ?? (() => {});
  }

  /** Runs the worker in the background until stop(); `wake` starts a pass at once. */
  start(pollMs = 2_000): void {
    this.#loop ??= startPollLoop(() => this.runOnce(), { pollMs, onError: this.#onError });
  }

  wake(): void {
    this.#loop?.wake();
  }

  async stop(): Promise<void> {
    await this.#loop?.stop();
    this.#loop = undefined;
  }

  /** Provisions one claimable engine (only `engineId` when given); true when it found one. */
  async runOnce(engineId?: string): Promise<boolean> {
    const claimed = await this.#db.transaction((tx) =>
      engineStore(tx, this.#now).claim(this.#owner, this.#leaseMs, engineId),
    );
    if (!claimed) return false;
    await this.#provision(claimed);
    return true;
  }

  /**
   * Makes a database whose engine was deleted before provisioning finished, keeping the database:
   * no engine row is left to carry the job, so the deleting call does it (creation is idempotent,
   * so a provisioner still working on it is harmless). A failure leaves the database in `error`.
   */
  async makeKept(database: DatabaseRow): Promise<void> {
    const store = engineStore(this.#db, this.#now);
    try {
      await this.#host.create(database.name);
    } catch (error) {
      this.#onError(error);
      await store.setDatabaseStatus(database.id, "error");
      return;
    }
    await store.setDatabaseStatus(database.id, "running");
  }

  async #provision(claimed: EngineRow): Promise<void> {
    const store = engineStore(this.#db, this.#now);
    let engine = claimed;
    if (engine.status === "PENDING") {
      engine = (await store.update(engine.id, { status: "PROVISIONING" })) ?? engine;
    }
    const database = engine.databaseId ? await store.database(engine.orgId, engine.databaseId) : undefined;
    if (!database) {
      await this.#fail(engine, "the engine has no database to provision", true);
      return;
    }
    try {
      await this.#host.create(database.name);
    } catch (error) {
      this.#onError(error);
      await this.#fail(engine, provisioningFailure(error), false);
      return;
    }
    const finished = await this.#db.transaction(async (tx) => {
      const slots = engineStore(tx, this.#now);
      const current = await slots.getForUpdate(engine.orgId, engine.bucket);
      // Deleted or reconfigured while the database was being made: the result is not wanted.
      if (!current || current.id !== engine.id || current.databaseId !== database.id || current.mode !== "auto")
        return false;
      if (current.status !== "PROVISIONING") return true;
      await slots.setDatabaseStatus(database.id, "running");
      await slots.update(engine.id, { status: "ACTIVE", errorMessage: "", leaseOwner: "", leaseExpiresAt: 0 });
      return true;
    });
    if (finished) return;
    // Its engine went meanwhile. A database whose row is gone too (delete_database, or a
    // reconfiguration that abandoned it) is dropped; one that was kept is usable (pick mode).
    if (await store.database(engine.orgId, database.id)) await store.setDatabaseStatus(database.id, "running");
    else await this.#host.drop(database.name);
  }

  /** Counts a failed attempt: retried later with a growing delay, or ERROR after the last one. */
  async #fail(engine: EngineRow, message: string, final: boolean): Promise<void> {
    const attempts = engine.attempts + 1;
    await this.#db.transaction(async (tx) => {
      const slots = engineStore(tx, this.#now);
      const current = await slots.getForUpdate(engine.orgId, engine.bucket);
      if (!current || current.id !== engine.id || current.leaseOwner !== this.#owner) return;
      if (final || attempts >= this.#maxAttempts) {
        if (current.databaseId) await slots.setDatabaseStatus(current.databaseId, "error");
        await slots.update(engine.id, {
          status: "ERROR",
          errorMessage: message,
          attempts,
          leaseOwner: "",
          leaseExpiresAt: 0,
        });
        return;
      }
      await slots.update(engine.id, {
        attempts,
        leaseOwner: "",
        leaseExpiresAt: this.#now() + 1_000 * 2 ** attempts,
      });
    });
  }
}

/**
 * The cause a caller may read in error_message: a deliberate API error keeps its message, a
 * PostgreSQL refusal is named by what to fix, anything else is generic (no SQL, no stack).
 */
export function provisioningFailure(error: unknown): string {
  if (error instanceof ConnectError) return error.rawMessage;
  const code = (error as { code?: unknown }).code;
  if (code === "42501")
    return "the platform's database user may not create databases: grant it CREATEDB, or configure an external engine";
  if (code === "53100") return "the database server is out of disk space";
  if (code === "ECONNREFUSED" || code === "CONNECT_TIMEOUT") return "the platform's database server is unreachable";
  return "the vector database could not be created; see the server log";
}
