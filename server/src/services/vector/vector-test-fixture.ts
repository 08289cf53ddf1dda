import { randomBytes } from "node:crypto";
import { createContextValues, createHandlerContext, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { VectorService } from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import { principalKey } from "../../auth/principal.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { EmbedderRegistry } from "../../embeddings/embedder-registry.js";
import { NO_EMBEDDINGS, type EmbeddingsConfig } from "../../embeddings/embeddings-config.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import type { VectorCollectionDirectory, VectorCollectionInfo } from "./collection-directory.js";
import { embeddedVectorDbHost, postgresVectorDbHost, type VectorDbHost } from "./vector-db-host.js";
import { createVectorService, type VectorServiceHandle, type VectorServiceOptions } from "./vector-service.js";

/** A collection directory the tests fill by hand, standing in for the pipeline catalog. */
export class FakeCollectionDirectory implements VectorCollectionDirectory {
  readonly #rows = new Map<string, VectorCollectionInfo[]>();

  add(
    orgId: string,
    bucket: string,
    collection: Partial<VectorCollectionInfo> & { name: string },
  ): VectorCollectionInfo {
    const row: VectorCollectionInfo = {
      storeEntityId: `dest-${collection.name}`,
      pipelineId: `pipe-${collection.name}`,
      physicalName: `c_${randomBytes(8).toString("hex")}`,
      dimensions: 64,
      embedModel: "platform-lexical-hash-v1",
      modality: "text",
      sparseMode: "none",
      embeddingType: "EMBEDDING_TYPE_FLOAT",
      ...collection,
    };
    const key = `${orgId}/${bucket}`;
    this.#rows.set(key, [...(this.#rows.get(key) ?? []), row]);
    return row;
  }

  async list(orgId: string, bucket: string): Promise<VectorCollectionInfo[]> {
    return this.#rows.get(`${orgId}/${bucket}`) ?? [];
  }
}

/**
 * A database host that records what it was asked and can be held or made to fail, around the real
 * one of the run: the embedded vector PGlite in memory, or databases of their own on the
 * TEST_DATABASE_URL server (dropped at the end).
 */
export class RecordingHost implements VectorDbHost {
  readonly created = new Set<string>();
  /** When set, create() waits for it (to observe PROVISIONING). */
  gate: Promise<void> | undefined;
  /** When set, create() throws it. */
  failure: Error | undefined;

  constructor(readonly inner: VectorDbHost) {}

  get kind() {
    return this.inner.kind;
  }

  async create(name: string): Promise<void> {
    await this.gate;
    if (this.failure) throw this.failure;
    await this.inner.create(name);
    this.created.add(name);
  }

  async drop(name: string): Promise<void> {
    await this.inner.drop(name);
    this.created.delete(name);
  }

  connect(name: string) {
    return this.inner.connect(name);
  }

  async close(): Promise<void> {
    for (const name of [...this.created]) await this.inner.drop(name).catch(() => {});
    await this.inner.close();
  }
}

export interface VectorFixture {
  readonly database: TestDatabase;
  readonly host: RecordingHost;
  readonly directory: FakeCollectionDirectory;
  readonly service: VectorServiceHandle;
  contextOf(orgId: string): HandlerContext;
  close(): Promise<void>;
}

export async function openVectorFixture(
  extra: Partial<VectorServiceOptions> & { embeddings?: EmbeddingsConfig; fetch?: typeof fetch } = {},
): Promise<VectorFixture> {
  const database = await openTestDatabase();
  const serverUrl = process.env.TEST_DATABASE_URL;
  const host = new RecordingHost(serverUrl ? postgresVectorDbHost(serverUrl) : embeddedVectorDbHost("memory://"));
  const directory = new FakeCollectionDirectory();
  const embedders = new EmbedderRegistry({
    config: extra.embeddings ?? NO_EMBEDDINGS,
    allowPrivateNetwork: true,
    fetch: extra.fetch,
  });
  const service = createVectorService({
    db: database.db,
    box: createSecretBox(new Uint8Array(randomBytes(32))),
    databaseUrl: undefined,
    dataDir: "memory://",
    allowPrivateNetwork: true,
    embedders,
    collections: directory,
    host,
    provisioning: { leaseMs: 30_000, maxAttempts: 2 },
    ...extra,
  });
  return {
    database,
    host,
    directory,
    service,
    contextOf(orgId) {
      const contextValues = createContextValues();
      contextValues.set(principalKey, { orgId, orgName: "test", keyId: "key", roles: new Set(["admin"]) });
      return createHandlerContext({
        service: VectorService,
        method: VectorService.method.search,
        protocolName: "connect",
        requestMethod: "POST",
        url: "http://localhost/platform.data.vector.v1.VectorService/Search",
        contextValues,
      });
    },
    async close() {
      // The service closes its host, which drops the databases the run created.
      await service.close();
      await database.close();
    },
  };
}

export async function connectErrorOf(work: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await work();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected an error");
}
