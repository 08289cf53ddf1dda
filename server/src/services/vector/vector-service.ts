import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  ConfigureEngineRequest,
  EngineSchema,
} from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import type { VectorServiceImplementation } from "../../../../gen/platform/data/vector/v1/vector_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import type { EmbedderRegistry } from "../../embeddings/embedder-registry.js";
import type { BucketDirectory, VectorCollectionDirectory } from "./collection-directory.js";
import { VectorCollection } from "./engine/vector-collection.js";
import { EngineConnections } from "./engine-connections.js";
import { EngineProvisioning } from "./engine-provisioning.js";
import { checkedTarget, type ExternalOptions } from "./external-database.js";
import { embeddedVectorDbHost, postgresVectorDbHost, type VectorDbHost } from "./vector-db-host.js";
import { VectorEngines, type EngineDatabase, type EngineInput } from "./vector-engines.js";
import type { EngineRow } from "./vector-schema.js";
import { vectorSearch, type QueryObjects } from "./vector-search.js";

export interface VectorServiceOptions {
  /** The platform's database (engine and database rows). */
  readonly db: Database;
  /** Seals external engines' passwords. */
  readonly box: SecretBox;
  /** The platform's DATABASE_URL: auto engines get a database of their own on that server. */
  readonly databaseUrl: string | undefined;
  /** Without databaseUrl, auto engines get a schema of the embedded `<dataDir>/vector-db`. */
  readonly dataDir: string;
  /** The operator's --allow-private-network: external engines may be on loopback or private addresses. */
  readonly allowPrivateNetwork: boolean;
  readonly embedders: EmbedderRegistry;
  /** The bucket's objects, read for s3_key queries. */
  readonly objects?: QueryObjects;
  /** The pipeline catalog's vector collections of a bucket. */
  readonly collections: VectorCollectionDirectory;
  /** Bucket existence; a bucket it does not know is NOT_FOUND. Without it every bucket name is accepted. */
  readonly buckets?: BucketDirectory;
  readonly onError?: (error: unknown) => void;
  /** Pools kept open at once across engines (default 32). */
  readonly maxOpenDatabases?: number;
  /** Tests: another database host, provisioning timing, external connection details. */
  readonly host?: VectorDbHost;
  readonly provisioning?: { readonly leaseMs?: number; readonly maxAttempts?: number };
  readonly external?: Partial<ExternalOptions>;
}

/** The vector service and what other parts of the server use of it. */
export interface VectorServiceHandle {
  readonly implementation: VectorServiceImplementation;
  readonly engines: VectorEngines;
  readonly provisioning: EngineProvisioning;
  /**
   * The executor of a bucket's engine, for ingestion; a bucket without an engine gets an implicit
   * auto engine, provisioned before this resolves.
   */
  engineDatabase(orgId: string, bucket: string): Promise<EngineDatabase>;
  /** A collection of the bucket's engine (created on its first upsert), for ingestion's upserts and deletes. */
  collection(orgId: string, bucket: string, physicalName: string, dimensions: number): Promise<VectorCollection>;
  /**
   * The collection for deletes: undefined when the bucket has no engine (nothing was ever
   * ingested, so there is nothing to delete), without creating one.
   */
  existingCollection(
    orgId: string,
    bucket: string,
    physicalName: string,
    dimensions: number,
  ): Promise<VectorCollection | undefined>;
  /** Starts the provisioning worker. */
  start(pollMs?: number): void;
  /** Stops the worker and closes every pool and the embedded vector database. */
  close(): Promise<void>;
}

type EngineInit = MessageInitShape<typeof EngineSchema>;

export function createVectorService(options: VectorServiceOptions): VectorServiceHandle {
  const host =
    options.host ??
    (options.databaseUrl ? postgresVectorDbHost(options.databaseUrl) : embeddedVectorDbHost(options.dataDir));
  const connections = new EngineConnections(options.maxOpenDatabases);
  const provisioning = new EngineProvisioning({
    db: options.db,
    host,
    onError: options.onError,
    ...options.provisioning,
  });
  const engines = new VectorEngines({
    db: options.db,
    box: options.box,
    host,
    provisioning,
    connections,
    external: { allowPrivateNetwork: options.allowPrivateNetwork, ...options.external },
  });

  async function bucketOf(orgId: string, bucket: string): Promise<string> {
    if (bucket === "") throw new ConnectError("bucket is required", Code.InvalidArgument);
    if (options.buckets && !(await options.buckets.exists(orgId, bucket)))
      throw new ConnectError(`bucket ${bucket} not found`, Code.NotFound);
    return bucket;
  }

  async function engineMessage(engine: EngineRow): Promise<EngineInit> {
    const database = await engines.database(engine);
    const listed = await options.collections.list(engine.orgId, engine.bucket);
    let executor: EngineDatabase["executor"] | undefined;
    if (engine.status === "ACTIVE" && listed.length > 0) {
      try {
        executor = (await engines.connection(engine)).executor;
      } catch (error) {
        // An unreachable database reports its collections as not materialized rather than failing GetEngine.
        options.onError?.(error);
      }
    }
    const collections = await Promise.all(
      listed.map(async (collection) => {
        let materialized = false;
        if (executor) {
          try {
            materialized = await new VectorCollection(executor, collection).exists();
          } catch (error) {
            options.onError?.(error);
          }
        }
        return {
          name: collection.name,
          storeEntityId: collection.storeEntityId,
          pipelineId: collection.pipelineId,
          physicalName: collection.physicalName,
          dimensions: collection.dimensions,
          embedModel: collection.embedModel,
          modality: collection.modality,
          materialized,
        };
      }),
    );
    const external = engine.mode === "external";
    return {
      engineId: engine.id,
      bucket: engine.bucket,
      mode: engine.mode,
      status: engine.status,
      errorMessage: engine.status === "ERROR" ? engine.errorMessage : "",
      collections,
      // A provisioned database is reached through the platform only: its host is internal and not reported.
      vectordbEndpoint: external ? engine.endpoint : "",
      vectordbPort: external ? engine.port : 0,
      vectordbDbName: external ? engine.dbName : (database?.name ?? ""),
      serviceId: database?.id ?? "",
      serviceAccount: "",
      vectordbUser: external ? engine.dbUser : "",
      createdAt: BigInt(engine.createdAt),
      updatedAt: BigInt(engine.updatedAt),
    };
  }

  const implementation: VectorServiceImplementation = {
    async configureEngine(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await bucketOf(orgId, request.bucket);
      const engine = await engines.configure(orgId, bucket, engineInput(request));
      return engineMessage(engine);
    },

    async getEngine(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await bucketOf(orgId, request.bucket);
      return engineMessage(await engines.get(orgId, bucket));
    },

    async deleteEngine(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await bucketOf(orgId, request.bucket);
      await engines.delete(orgId, bucket, request.deleteDatabase);
      return {};
    },

    async listVectorDbInstances(_request, context) {
      const { orgId } = principalOf(context);
      const rows = await engines.instances(orgId);
      return {
        instances: rows.map((row) => ({
          serviceId: row.id,
          name: row.bucket,
          status: row.status,
          serviceType: "database",
          createdAt: new Date(row.createdAt).toISOString(),
        })),
      };
    },

    async search(request, context) {
      const { orgId } = principalOf(context);
      await bucketOf(orgId, request.bucket);
      return vectorSearch(
        {
          engines,
          collections: options.collections,
          embedders: options.embedders,
          ...(options.objects ? { objects: options.objects } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        },
        orgId,
        request,
        context.signal,
      );
    },
  };

  return {
    implementation,
    engines,
    provisioning,
    engineDatabase: (orgId, bucket) => engines.engineDatabase(orgId, bucket),
    async collection(orgId, bucket, physicalName, dimensions) {
      const { executor } = await engines.engineDatabase(orgId, bucket);
      return new VectorCollection(executor, { physicalName, dimensions });
    },
    async existingCollection(orgId, bucket, physicalName, dimensions) {
      if (!(await engines.find(orgId, bucket))) return undefined;
      const { executor } = await engines.engineDatabase(orgId, bucket);
      return new VectorCollection(executor, { physicalName, dimensions });
    },
    start(pollMs) {
      provisioning.start(pollMs);
    },
    async close() {
      await provisioning.stop();
      await connections.close();
      await host.close();
    },
  };
}

/** The request's mode and the values it takes; values of another mode are refused, not ignored. */
function engineInput(request: ConfigureEngineRequest): EngineInput {
  const mode = request.mode.trim().toLowerCase();
  const externalValues: Array<[string, boolean]> = [
    ["vectordb_endpoint", request.vectordbEndpoint !== ""],
    ["vectordb_port", request.vectordbPort !== 0],
    ["vectordb_db_name", request.vectordbDbName !== ""],
    ["vectordb_user", request.vectordbUser !== ""],
    ["vectordb_password", request.vectordbPassword !== ""],
  ];
  const refuse = (present: Array<[string, boolean]>, what: string) => {
    const extra = present.find(([, set]) => set);
    if (extra) throw new ConnectError(`${extra[0]} applies to ${what} only`, Code.InvalidArgument);
  };
  switch (mode) {
    case "auto":
      refuse([...externalValues, ["service_id", request.serviceId !== ""]], "other modes");
      return { mode: "auto" };
    case "pick":
      refuse(externalValues, "external mode");
      if (request.serviceId === "")
        throw new ConnectError(
          "service_id is required in pick mode (an id from ListVectorDbInstances)",
          Code.InvalidArgument,
        );
      return { mode: "pick", serviceId: request.serviceId };
    case "external":
      refuse([["service_id", request.serviceId !== ""]], "pick mode");
      return {
        mode: "external",
        ...checkedTarget({
          endpoint: request.vectordbEndpoint,
          port: request.vectordbPort,
          dbName: request.vectordbDbName,
          user: request.vectordbUser,
          password: request.vectordbPassword,
        }),
      };
    case "":
      throw new ConnectError("mode is required: auto, external or pick", Code.InvalidArgument);
    default:
      throw new ConnectError(
        `mode must be auto, external or pick, got ${JSON.stringify(request.mode)}`,
        Code.InvalidArgument,
      );
  }
}
