import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import type { SqlExecutor } from "./engine/sql-executor.js";
import type { EngineConnections } from "./engine-connections.js";
import type { EngineProvisioning } from "./engine-provisioning.js";
import { engineStore, type EngineStore } from "./engine-store.js";
import {
  allowedAddress,
  checkExternal,
  checkedTarget,
  openExternal,
  type ExternalOptions,
  type ExternalTarget,
} from "./external-database.js";
import { vectorDatabaseName, type VectorConnection, type VectorDbHost } from "./vector-db-host.js";
import type { DatabaseRow, EngineRow } from "./vector-schema.js";

export type EngineInput =
  | { readonly mode: "auto" }
  | ({ readonly mode: "external" } & ExternalTarget)
  | { readonly mode: "pick"; readonly serviceId: string };

export interface VectorEnginesOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly host: VectorDbHost;
  readonly provisioning: EngineProvisioning;
  readonly connections: EngineConnections;
  readonly external: ExternalOptions;
  readonly now?: () => number;
  /** How long first use waits for an engine another process is provisioning. */
  readonly provisionWaitMs?: number;
}

/** An engine ready for the engine core: its row and the executor on its database. */
export interface EngineDatabase {
  readonly engine: EngineRow;
  readonly executor: SqlExecutor;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A concurrent first configuration of the same bucket won; the caller's transaction is retried. */
class LostRace extends Error {}

/**
 * The engines of buckets (1:1): configuration in the three modes, the databases auto engines
 * provision, and the connections the engine core runs on.
 */
export class VectorEngines {
  readonly #options: VectorEnginesOptions;
  readonly #store: EngineStore;

  constructor(options: VectorEnginesOptions) {
    this.#options = options;
    this.#store = engineStore(options.db, options.now);
  }

  find(orgId: string, bucket: string): Promise<EngineRow | undefined> {
    return this.#store.get(orgId, bucket);
  }

  async get(orgId: string, bucket: string): Promise<EngineRow> {
    const engine = await this.#store.get(orgId, bucket);
    if (!engine) throw new ConnectError(`bucket ${bucket} has no vector engine`, Code.NotFound);
    return engine;
  }

  /** The database row of an auto or pick engine. */
  database(engine: EngineRow): Promise<DatabaseRow | undefined> {
    return engine.databaseId ? this.#store.database(engine.orgId, engine.databaseId) : Promise.resolve(undefined);
  }

  instances(orgId: string): Promise<DatabaseRow[]> {
    return this.#store.databases(orgId);
  }

  /**
   * ConfigureEngine. The same mode and values again return the engine unchanged (no second
   * database); an auto engine in ERROR configured as auto again is provisioned anew.
   */
  async configure(orgId: string, bucket: string, input: EngineInput, implicit = false): Promise<EngineRow> {
    // External databases are checked before anything is stored: a wrong address is refused, not recorded.
    if (input.mode === "external") {
      const existing = await this.#store.get(orgId, bucket);
      if (existing && this.#sameExternal(existing, input)) return existing;
      await checkExternal(input, this.#options.external);
    }
    let outcome: { engine: EngineRow; abandoned?: DatabaseRow | undefined };
    try {
      outcome = await this.#configureOnce(orgId, bucket, input, implicit);
    } catch (error) {
      if (!(error instanceof LostRace)) throw error;
      outcome = await this.#configureOnce(orgId, bucket, input, implicit);
    }
    const { engine, abandoned } = outcome;
    // A database that never became usable goes with the configuration that asked for it; should
    // provisioning still be making it, the worker drops it once it sees the row gone.
    if (abandoned) await this.#options.host.drop(abandoned.name).catch(() => {});
    await this.#options.connections.evict(`engine:${engine.id}:`);
    if (engine.status === "PENDING") this.#options.provisioning.wake();
    return engine;
  }

  #configureOnce(
    orgId: string,
    bucket: string,
    input: EngineInput,
    implicit: boolean,
  ): Promise<{ engine: EngineRow; abandoned?: DatabaseRow | undefined }> {
    return this.#options.db.transaction(async (tx) => {
      const store = engineStore(tx, this.#options.now);
      const existing = await store.getForUpdate(orgId, bucket);
      const unchanged = (engine: EngineRow) => ({ engine });
      // An auto engine not (yet) ACTIVE leaves a database nobody can use once it is reconfigured.
      const abandon = async (): Promise<DatabaseRow | undefined> => {
        if (existing?.mode !== "auto" || existing.status === "ACTIVE" || !existing.databaseId) return undefined;
        const database = await store.database(orgId, existing.databaseId);
        if (!database || database.status === "running") return undefined;
        await store.update(existing.id, { databaseId: null });
        await store.removeDatabase(database.id);
        return database;
      };
      const id = existing?.id ?? randomUUID();
      const cleared = { endpoint: "", port: 0, dbName: "", dbUser: "", sealedPassword: null, errorMessage: "" };
      let changes: Parameters<EngineStore["update"]>[1];
      if (input.mode === "auto") {
        if (existing?.mode === "auto" && existing.status !== "ERROR") return unchanged(existing);
        const databaseId = randomUUID();
        await store.insertDatabase({
          id: databaseId,
          orgId,
          bucket,
          kind: this.#options.host.kind,
          name: vectorDatabaseName(databaseId),
        });
        changes = {
          ...cleared,
          mode: "auto",
          status: "PENDING",
          databaseId,
          attempts: 0,
          leaseOwner: "",
          leaseExpiresAt: 0,
        };
      } else if (input.mode === "pick") {
        if (!UUID.test(input.serviceId)) throw invalid("service_id must be an id from ListVectorDbInstances");
        const database = await store.database(orgId, input.serviceId);
        if (!database) throw new ConnectError(`vector database ${input.serviceId} not found`, Code.NotFound);
        if (database.status !== "running")
          throw new ConnectError(
            `vector database ${input.serviceId} is ${database.status}, not running`,
            Code.FailedPrecondition,
          );
        if (existing?.mode === "pick" && existing.databaseId === database.id) return unchanged(existing);
        changes = { ...cleared, mode: "pick", status: "ACTIVE", databaseId: database.id };
      } else {
        changes = {
          mode: "external",
          status: "ACTIVE",
          errorMessage: "",
          databaseId: null,
          endpoint: input.endpoint,
          port: input.port,
          dbName: input.dbName,
          dbUser: input.user,
          sealedPassword: input.password === "" ? null : this.#options.box.seal(utf8(input.password), aad(orgId, id)),
        };
      }
      if (existing) {
        const abandoned = await abandon();
        return { engine: (await store.update(id, { ...changes, implicit })) as EngineRow, abandoned };
      }
      const inserted = await store.insert({
        id,
        orgId,
        bucket,
        mode: changes.mode ?? "auto",
        status: "PENDING",
        ...changes,
        implicit,
      });
      if (!inserted) throw new LostRace();
      return { engine: inserted };
    });
  }

  /**
   * DeleteEngine. With `deleteDatabase` (auto engines only) the database and every collection in
   * it are dropped too, unless another bucket's engine is attached to it.
   */
  async delete(orgId: string, bucket: string, deleteDatabase: boolean): Promise<void> {
    const engine = await this.get(orgId, bucket);
    const database = deleteDatabase ? await this.#deletableDatabase(engine) : undefined;
    await this.#options.connections.evict(`engine:${engine.id}:`);
    if (database) {
      await this.#options.connections.evict(`database:${database.id}`);
      await this.#options.host.drop(database.name);
    }
    await this.#options.db.transaction(async (tx) => {
      const store = engineStore(tx, this.#options.now);
      await store.remove(engine.id);
      if (database) await store.removeDatabase(database.id);
    });
    // A kept database the engine was still provisioning has lost its job with the engine row.
    const kept = database ? undefined : await this.database(engine);
    if (engine.mode === "auto" && kept?.status === "creating") await this.#options.provisioning.makeKept(kept);
  }

  async #deletableDatabase(engine: EngineRow): Promise<DatabaseRow | undefined> {
    if (engine.mode !== "auto")
      throw new ConnectError(
        `delete_database applies to auto engines only; this engine is ${engine.mode}`,
        Code.FailedPrecondition,
      );
    const database = await this.database(engine);
    if (!database) return undefined;
    const others = await this.#store.otherUsers(database.id, engine.id);
    if (others.length > 0)
      throw new ConnectError(
        `the database is also used by the engine of bucket ${others.join(", ")}; delete that engine first or keep the database`,
        Code.FailedPrecondition,
      );
    return database;
  }

  /**
   * The executor of the bucket's engine, for ingestion. A bucket without an engine gets an
   * implicit auto engine, provisioned here and now, so that create collection -> bind rule ->
   * ingest -> search works without a ConfigureEngine call. UNAVAILABLE when another process is
   * still provisioning it after `provisionWaitMs`; FAILED_PRECONDITION when provisioning failed.
   */
  async engineDatabase(orgId: string, bucket: string): Promise<EngineDatabase> {
    let engine =
      (await this.#store.get(orgId, bucket)) ?? (await this.configure(orgId, bucket, { mode: "auto" }, true));
    const deadline = (this.#options.now ?? Date.now)() + (this.#options.provisionWaitMs ?? 60_000);
    while (engine.status === "PENDING" || engine.status === "PROVISIONING") {
      if (!(await this.#options.provisioning.runOnce(engine.id))) {
        if (Date.now() > deadline)
          throw new ConnectError(
            `the vector engine of bucket ${bucket} is still provisioning; retry shortly`,
            Code.Unavailable,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      engine = await this.get(orgId, bucket);
    }
    return { engine, executor: (await this.connection(engine)).executor };
  }

  /** The pooled connection of an engine; FAILED_PRECONDITION unless it is ACTIVE. */
  async connection(engine: EngineRow): Promise<VectorConnection> {
    if (engine.status === "ERROR")
      throw new ConnectError(
        `the vector engine of bucket ${engine.bucket} failed: ${engine.errorMessage}; configure it again`,
        Code.FailedPrecondition,
      );
    if (engine.status !== "ACTIVE")
      throw new ConnectError(`the vector engine of bucket ${engine.bucket} is ${engine.status}`, Code.Unavailable);
    const { connections, host, external } = this.#options;
    if (engine.mode === "external") {
      return connections.get(`engine:${engine.id}:${engine.updatedAt}`, async () => {
        const target = this.#externalTarget(engine);
        return openExternal(target, await allowedAddress(target.endpoint, external), external);
      });
    }
    const database = await this.database(engine);
    if (!database)
      throw new ConnectError(`the database of bucket ${engine.bucket}'s engine is gone`, Code.FailedPrecondition);
    return connections.get(`database:${database.id}`, () => host.connect(database.name));
  }

  #externalTarget(engine: EngineRow): ExternalTarget {
    return {
      endpoint: engine.endpoint,
      port: engine.port,
      dbName: engine.dbName,
      user: engine.dbUser,
      password: this.#password(engine) ?? "",
    };
  }

  #password(engine: EngineRow): string | undefined {
    if (!engine.sealedPassword) return undefined;
    try {
      return new TextDecoder().decode(this.#options.box.open(engine.sealedPassword, aad(engine.orgId, engine.id)));
    } catch {
      throw new ConnectError(
        `the password of bucket ${engine.bucket}'s external engine cannot be opened with the server's secret key; configure the engine again`,
        Code.FailedPrecondition,
      );
    }
  }

  #sameExternal(engine: EngineRow, target: ExternalTarget): boolean {
    if (engine.mode !== "external" || engine.status !== "ACTIVE") return false;
    if (engine.endpoint !== target.endpoint || engine.port !== target.port) return false;
    if (engine.dbName !== target.dbName || engine.dbUser !== target.user) return false;
    try {
      return (this.#password(engine) ?? "") === target.password;
    } catch {
      return false;
    }
  }
}

/** Binds a sealed password to its organization and engine: a copied value opens nowhere else. */
function aad(orgId: string, engineId: string): string {
  return `platform.data.vector.v1.Engine/${orgId}/${engineId}`;
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

export { checkedTarget };
