import { Code, ConnectError } from "@connectrpc/connect";
import { PipelineFacet } from "../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { Pipeline, VectorConfig } from "../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { SecretBox } from "./crypto/secret-box.js";
import type { Database } from "./db/database.js";
import type { EmbedderRegistry } from "./embeddings/embedder-registry.js";
import type { JsonObject } from "./services/script/dsl/cel-json.js";
import { createIngestService } from "./services/ingest/ingest-handlers.js";
import type { PipelineTarget, SourceDirectory } from "./services/ingest/ingest-ports.js";
import { createIngestWorker, type IngestWorker } from "./services/ingest/ingest-worker.js";
import { createRuleStore } from "./services/ingest/rule-store.js";
import { createScriptTemplateRunner, type ScriptService } from "./services/ingest/script-template-runner.js";
import type { TemplateSource } from "./services/pipeline/template-facts.js";
import { createPipelineService, type PipelineServiceParts } from "./services/pipeline/pipeline-service.js";
import { createSourceReaders } from "./services/source/readers/create-source-readers.js";
import type { InternalObjects } from "./services/source/readers/source-reader.js";
import { createInternalSources } from "./services/source/internal-sources.js";
import { createSourceService } from "./services/source/source-handlers.js";
import { createSourceStore } from "./services/source/source-store.js";
import { TableStore } from "./services/tables/table-store.js";
import type { OAuthProviders } from "./services/source/oauth/oauth-provider-config.js";
import type { BucketDirectory } from "./services/storage/bucket-directory.js";
import { S3Error } from "./services/storage/s3/s3-error.js";
import { catalogCollectionDirectory } from "./services/vector/catalog-collection-directory.js";
import { createVectorService, type VectorServiceHandle } from "./services/vector/vector-service.js";
import { createVectorDataService } from "./services/vector/data-plane/vector-data-service.js";
import { organizations } from "./auth/auth-schema.js";
import { eq } from "drizzle-orm";
import type { Readable } from "node:stream";

export interface DataPlatformOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly allowPrivateNetwork: boolean;
  readonly oauthProviders: OAuthProviders;
  readonly embedders: EmbedderRegistry;
  readonly storage: BucketDirectory;
  /** The script service, called in process through its generated interface. */
  readonly scripts: ScriptService & TemplateSource;
  /** How long a process holds an ingest job or sync run without renewing it. */
  readonly leaseMs: number;
  readonly maxObjectBytes: number;
  readonly log: (level: "warn" | "error", message: string, fields: Record<string, unknown>) => void;
}

/**
 * The data platform's services, composed: the pipeline catalog, sources, ingestion, the vector
 * engine and warehouse tables over the storage service's buckets. Each service sees the others only through the narrow
 * interfaces it declares; the adapters between them are here, and nowhere else.
 */
export function createDataPlatform(options: DataPlatformOptions) {
  const { db, storage } = options;
  const bucketExists = async (orgId: string, bucket: string) => (await storage.getBucket(orgId, bucket)) !== undefined;
  const rules = createRuleStore(db);

  const pipelines: PipelineServiceParts = createPipelineService({
    db,
    templates: options.scripts,
    buckets: { exists: bucketExists },
    embedModelOf: (model, modality) => options.embedders.resolveModelId(model, modality),
    rules: { deleteRule: (tx, orgId, bucket, ruleId) => createRuleStore(tx).delete(orgId, bucket, ruleId) },
    warn: (message, fields) => options.log("warn", message, fields),
  });

  const sourceService = createSourceService({
    db,
    box: options.box,
    oauthProviders: options.oauthProviders,
    allowPrivateNetwork: options.allowPrivateNetwork,
    bucketExists,
    sourceInUse: async (orgId, bucket, sourceId) =>
      (await rules.list(orgId, bucket, { sourceId, limit: 1 })).length > 0,
  });
  const internalSources = createInternalSources(db);
  const sourceRows = createSourceStore(db);
  const readers = createSourceReaders({
    db,
    box: options.box,
    objects: internalObjects(storage),
    allowPrivateNetwork: options.allowPrivateNetwork,
  });

  const vector: VectorServiceHandle = createVectorService({
    db,
    box: options.box,
    databaseUrl: options.databaseUrl,
    dataDir: options.dataDir,
    allowPrivateNetwork: options.allowPrivateNetwork,
    embedders: options.embedders,
    collections: catalogCollectionDirectory(pipelines.catalog),
    objects: {
      async read(orgId, bucket, key, maxBytes) {
        const object = await storage.readObject(orgId, bucket, key).catch((error: unknown) => {
          // A key the storage refuses (too long, NUL) is the caller's input.
          if (error instanceof S3Error) throw new ConnectError(`s3_key: ${error.message}`, Code.InvalidArgument);
          throw error;
        });
        return object && { bytes: await collect(object.blob.read(), maxBytes, key), contentType: object.contentType };
      },
    },
    buckets: { exists: bucketExists },
    onError: (error) => options.log("error", "vector engine task failed", { error }),
  });

  // Warehouse tables live in the bucket's engine database; reading a bucket that has none yet
  // finds no table rather than provisioning one.
  const tables = new TableStore({
    buckets: { exists: bucketExists },
    async engineDatabase(orgId, bucket, provision) {
      if (!provision && !(await vector.engines.find(orgId, bucket))) return undefined;
      return (await vector.engineDatabase(orgId, bucket)).executor;
    },
  });

  const pipelineTargets = {
    async getPipeline(orgId: string, bucket: string, pipelineId: string) {
      const pipeline = await pipelines.catalog.getPipeline(orgId, bucket, pipelineId);
      return pipeline && pipelineTarget(pipeline);
    },
  };
  const sources: SourceDirectory = {
    exists: async (orgId, bucket, sourceId) => (await sourceRows.get(orgId, bucket, sourceId)) !== undefined,
    internalSourceId: (orgId, bucket) => internalSources.ensureInternalSource(orgId, bucket),
    reader: async (orgId, bucket, sourceId) => {
      const reader = await readers.forSource(orgId, bucket, sourceId);
      return {
        async *list(prefix) {
          for await (const object of reader.discover()) {
            if (object.key.startsWith(prefix))
              yield { key: object.key, etag: object.etag, size: object.size ?? 0, contentType: object.contentType };
          }
        },
        async read(key, maxBytes) {
          const body = await reader.read(key);
          return { bytes: await collect(body.body, maxBytes, key), contentType: body.contentType, etag: body.etag };
        },
      };
    },
  };

  const organizationNames = new Map<string, string>();
  const worker: IngestWorker = createIngestWorker({
    db,
    pipelines: pipelineTargets,
    sources,
    vectors: {
      async replaceObject(orgId, bucket, target, sourceKey, chunks) {
        const collection = await vector.collection(orgId, bucket, target.physicalName, target.dimensions);
        await collection.upsertObject(
          sourceKey,
          chunks.map((chunk, index) => ({
            chunkIndex: typeof chunk.metadata.chunk_index === "number" ? chunk.metadata.chunk_index : index,
            content: chunk.content,
            metadata: chunk.metadata,
            embedding: chunk.values,
          })),
        );
      },
      async deleteObject(orgId, bucket, target, sourceKey) {
        const collection = await vector.existingCollection(orgId, bucket, target.physicalName, target.dimensions);
        await collection?.deleteObject(sourceKey);
      },
    },
    runner: createScriptTemplateRunner({
      scripts: options.scripts,
      organizationName: async (orgId) => {
        let name = organizationNames.get(orgId);
        if (name === undefined) {
          const [row] = await db
            .select({ name: organizations.name })
            .from(organizations)
            .where(eq(organizations.id, orgId));
          name = row?.name ?? "";
          organizationNames.set(orgId, name);
        }
        return name;
      },
    }),
    leaseMs: options.leaseMs,
    maxObjectBytes: options.maxObjectBytes,
    log: (message, fields) => options.log("warn", message, fields),
  });
  const ingest = createIngestService({ db, pipelines: pipelineTargets, sources, wake: () => worker.wake() });

  // Every bucket gets its internal source, and its writes reach its on-change rules.
  storage.onBucketCreated(
    async (event) => void (await internalSources.ensureInternalSource(event.orgId, event.bucket)),
  );
  storage.onObjectChanged((change) => ingest.onObjectChanged(change));

  return {
    pipelines: pipelines.service,
    sources: sourceService,
    ingest,
    vector: vector.implementation,
    vectorData: createVectorDataService({
      buckets: { exists: bucketExists },
      engineDatabase: (orgId, bucket) => vector.engineDatabase(orgId, bucket),
    }),
    /** The buckets' warehouse tables, for the actions service (no RPC of its own). */
    tables,
    start() {
      worker.start();
      vector.start();
    },
    async stop() {
      await worker.stop();
      await vector.close();
    },
  };
}

export type DataPlatform = ReturnType<typeof createDataPlatform>;

/** The storage service's objects of a bucket, as the internal source reads them. */
function internalObjects(storage: BucketDirectory): InternalObjects {
  return {
    async *list(orgId, bucket, prefix) {
      let after = "";
      for (;;) {
        const page = await storage.listObjects(orgId, bucket, { prefix, delimiter: "", after, maxKeys: 1000 });
        for (const object of page.objects) yield { ...object, version: "" };
        if (!page.isTruncated) return;
        after = page.next;
      }
    },
    async read(orgId, bucket, key) {
      const object = await storage.readObject(orgId, bucket, key);
      if (!object) throw new Error(`${key} does not exist in bucket ${bucket}`);
      return { body: object.blob.read(), size: object.size, contentType: object.contentType, etag: object.etag };
    },
  };
}

/** A pipeline of the catalog as ingestion needs it. */
function pipelineTarget(pipeline: Pipeline): PipelineTarget {
  const destination = pipeline.destination;
  const config = destination?.config.case === "vector" ? destination.config.value : undefined;
  return {
    pipelineId: pipeline.pipelineId,
    bucket: pipeline.bucket,
    templateId: pipeline.scriptTemplate,
    destinationName: destination?.name ?? "",
    facet: PipelineFacet[destination?.facet ?? PipelineFacet.UNSPECIFIED].toLowerCase(),
    ...(config ? { vector: vectorTarget(destination!.name, config) } : {}),
  };
}

function vectorTarget(name: string, config: VectorConfig) {
  return {
    collectionName: name,
    physicalName: config.physicalName,
    dimensions: config.dimensions,
    embedModel: config.embedModel,
    chunkSize: config.chunkSize,
    chunkOverlap: config.chunkOverlap,
    templateInputs: (config.templateInputs ?? {}) as JsonObject,
    enableBm25: config.enableBm25,
  };
}

async function collect(stream: Readable, maxBytes: number, key: string): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of stream) {
    const chunk = part as Buffer;
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new ConnectError(
        `${key} is larger than the ${maxBytes} bytes this reads of an object`,
        Code.InvalidArgument,
      );
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
