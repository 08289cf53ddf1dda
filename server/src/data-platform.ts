import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { SearchRequestSchema, VectorService } from "../../gen/platform/data/vector/v1/vector_service_pb.js";
import type { VectorServiceImplementation } from "../../gen/platform/data/vector/v1/vector_service_server.js";
import { principalKey } from "./auth/principal.js";
import type { ActionDefinition } from "./services/actions/action-definition.js";
import { createActionRunHandlers } from "./services/actions/action-run-handlers.js";
import { createActionScripts } from "./services/actions/action-scripts.js";
import type { ActionObjects, ActionsPorts, ActionTables, ActionVectors } from "./services/actions/actions-ports.js";
import { parseCsv, parseJsonLines } from "./services/tables/table-parsers.js";
import { createActionRunner } from "./services/actions/create-action-runner.js";
import { createRunSaveLock } from "./services/actions/run-save-lock.js";
import { createActionQueue } from "./services/actions/action-queue.js";
import { scriptThreadFollower } from "./services/actions/queue-thread-follower.js";
import { startRunRetention } from "./services/actions/run-retention.js";
import { extractText, mediaTypeOf } from "./services/ingest/text-extraction.js";
import type { PollLoop } from "./background/poll-loop.js";
import type { VectorCollectionDirectory } from "./services/vector/collection-directory.js";
import { storageBuckets } from "./services/storage/storage-schema.js";
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
import { createScriptTemplateRunner } from "./services/ingest/script-template-runner.js";
import { inProcessScripts, type InProcessScriptMethods } from "./services/script/in-process-scripts.js";
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
  readonly scripts: Partial<InProcessScriptMethods> & TemplateSource;
  /** How long a process holds an ingest job or sync run without renewing it. */
  readonly leaseMs: number;
  readonly maxObjectBytes: number;
  /** The catalog of actions the actions service offers. */
  readonly actions: readonly ActionDefinition[];
  /** Whether an LLM endpoint is configured (actions that require "llm" need it). */
  readonly llmConfigured: boolean;
  /** How long an action run's folder is kept unless its output was saved. */
  readonly actionRunRetentionMs: number;
  /** Queued action runs one process executes at once (--action-concurrency). */
  readonly actionConcurrency: number;
  /** Queued action runs of one organization executing at once, over every process (--action-org-concurrency). */
  readonly actionOrgConcurrency: number;
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
  const organizationName = async (orgId: string) => {
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
  };
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
      scripts: inProcessScripts({
        scripts: options.scripts,
        organizationName,
        keyId: "service:ingest",
        role: "script.admin",
      }),
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

  const scriptsForActions = inProcessScripts({
    scripts: options.scripts,
    organizationName,
    keyId: "service:actions",
    role: "script.editor",
  });
  const actionScripts = createActionScripts({ scripts: scriptsForActions });
  const actionPorts: ActionsPorts = {
    objects: actionObjects(storage),
    text: { mediaTypeOf, extract: extractText },
    vectors: actionVectors(vector, catalogCollectionDirectory(pipelines.catalog), organizationName),
    tables: actionTables(tables),
    templates: actionScripts,
    scripts: actionScripts,
    capabilities: { llm: options.llmConfigured },
  };
  const actionRuns = createActionRunner({
    ports: actionPorts,
    actions: options.actions,
    onError: (error, fields) => options.log("error", "action run failed", { ...fields, error }),
  });
  const actionQueue = createActionQueue({
    db,
    runner: actionRuns.runner,
    catalog: { get: (actionId) => actionRuns.catalog.action(actionId) },
    buckets: { exists: bucketExists },
    manifests: actionRuns.manifests,
    threads: scriptThreadFollower(scriptsForActions),
    leaseMs: options.leaseMs,
    concurrency: options.actionConcurrency,
    perOrganization: options.actionOrgConcurrency,
    log: (message, fields) => options.log("warn", message, fields),
  });
  let retention: PollLoop | undefined;
  const stopping = new AbortController();

  return {
    pipelines: pipelines.service,
    sources: sourceService,
    ingest,
    vector: vector.implementation,
    vectorData: createVectorDataService({
      buckets: { exists: bucketExists },
      engineDatabase: (orgId, bucket) => vector.engineDatabase(orgId, bucket),
    }),
    /** The actions service's run half (the queue's methods are composed next to it in server.ts). */
    actionRuns: createActionRunHandlers({
      ports: actionPorts,
      ...actionRuns,
      saveLock: createRunSaveLock({ db }),
      stopping: stopping.signal,
    }),
    /** The runner the actions queue executes dispatches with. */
    actionRunner: actionRuns.runner,
    actionQueue: actionQueue.handlers,
    /** Run manifests by bucket and run id (a watch of an ended run is rebuilt from its manifest). */
    actionRunManifests: actionRuns.manifests,
    /** The buckets' warehouse tables (no RPC of their own; the actions service reads and writes them). */
    tables,
    start() {
      worker.start();
      vector.start();
      actionQueue.start();
      retention ??= startRunRetention({
        objects: actionPorts.objects,
        manifests: actionRuns.manifests,
        retentionMs: options.actionRunRetentionMs,
        buckets: () => db.select({ orgId: storageBuckets.orgId, bucket: storageBuckets.name }).from(storageBuckets),
        onError: (error) => options.log("warn", "action run retention sweep failed", { error }),
      });
    },
    async stop() {
      stopping.abort();
      await actionQueue.stop();
      await retention?.stop();
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

/** The storage service's objects as the actions service uses them; a key the storage refuses is the caller's input. */
function actionObjects(storage: BucketDirectory): ActionObjects {
  const refused = (error: unknown): never => {
    if (error instanceof S3Error) throw new ConnectError(`key: ${error.message}`, Code.InvalidArgument);
    throw error;
  };
  return {
    bucketExists: async (orgId, bucket) => (await storage.getBucket(orgId, bucket)) !== undefined,
    async head(orgId, bucket, key) {
      const info = await storage.headObject(orgId, bucket, key).catch(refused);
      return info && { key, size: info.size, contentType: info.contentType };
    },
    async read(orgId, bucket, key, maxBytes) {
      const object = await storage.readObject(orgId, bucket, key).catch(refused);
      return object && { bytes: await collect(object.blob.read(), maxBytes, key), contentType: object.contentType };
    },
    async readStart(orgId, bucket, key, bytes) {
      const object = await storage.readObject(orgId, bucket, key).catch(refused);
      if (!object) return undefined;
      if (object.size === 0) {
        await object.blob.close();
        return new Uint8Array();
      }
      const end = Math.min(bytes, object.size) - 1;
      return collect(object.blob.read({ start: 0, end }), bytes, key);
    },
    async put(orgId, bucket, key, bytes, contentType) {
      const info = await storage
        .putObject(
          orgId,
          bucket,
          key,
          (async function* () {
            yield bytes;
          })(),
          { contentType, metadata: {} },
        )
        .catch(refused);
      return { key, size: info.size, contentType: info.contentType };
    },
    async copy(orgId, from, to) {
      const info = await storage
        .copyObject(orgId, from, to, (source) => ({ contentType: source.contentType, metadata: source.metadata }))
        .catch(refused);
      return { key: to.key, size: info.size, contentType: info.contentType };
    },
    async list(orgId, bucket, options) {
      const page = await storage.listObjects(orgId, bucket, options);
      return {
        keys: page.objects.map((object) => object.key),
        prefixes: page.commonPrefixes,
        next: page.isTruncated ? page.next : "",
      };
    },
    async delete(orgId, bucket, key) {
      await storage.deleteObject(orgId, bucket, key);
    },
  };
}

/** The warehouse tables and their parsers as the actions service uses them. */
function actionTables(tables: TableStore): ActionTables {
  return {
    getTable: (orgId, bucket, name) => tables.findTable(orgId, bucket, name),
    async readRows(orgId, bucket, name, page) {
      return (await tables.readRows(orgId, bucket, name, page)).rows;
    },
    async load(orgId, bucket, name, rows, options) {
      return (await tables.loadTable(orgId, bucket, name, rows, options)).written;
    },
    parseCsv: (text) => parseCsv(text).rows,
    parseJsonLines: (text) => parseJsonLines(text).rows,
  };
}

/** The bucket's vector collections by name (the pipeline catalog), their chunks (the vector engine) and search. */
function actionVectors(
  vector: VectorServiceHandle,
  collections: VectorCollectionDirectory,
  organizationName: (orgId: string) => Promise<string>,
): ActionVectors {
  const collectionOf = async (orgId: string, bucket: string, name: string) =>
    (await collections.list(orgId, bucket)).find((collection) => collection.name === name);
  const search: VectorServiceImplementation["search"] = vector.implementation.search;
  return {
    collectionExists: async (orgId, bucket, name) => (await collectionOf(orgId, bucket, name)) !== undefined,
    async readChunks(orgId, bucket, name, ids) {
      const info = await collectionOf(orgId, bucket, name);
      if (!info) return [];
      const collection = await vector.existingCollection(orgId, bucket, info.physicalName, info.dimensions);
      if (!collection || !(await collection.exists())) return [];
      const rows = await collection.executor.query<{ id: string; content: string; metadata: unknown }>(
        `SELECT id, content, metadata FROM ${collection.tables.chunks} WHERE id = ANY($1::text[])`,
        [[...ids]],
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.flatMap((id) => {
        const row = byId.get(id);
        if (!row) return [];
        const metadata =
          typeof row.metadata === "string" ? (JSON.parse(row.metadata) as JsonObject) : (row.metadata as JsonObject);
        return [{ id, content: row.content, metadata }];
      });
    },
    async replaceObject(orgId, bucket, name, sourceKey, chunks) {
      const info = await collectionOf(orgId, bucket, name);
      if (!info) throw new ConnectError(`collection ${name} not found in bucket ${bucket}`, Code.NotFound);
      const collection = await vector.collection(orgId, bucket, info.physicalName, info.dimensions);
      const rows = chunks.map((chunk, index) => ({
        chunkIndex: typeof chunk.metadata["chunk_index"] === "number" ? chunk.metadata["chunk_index"] : index,
        content: chunk.content,
        metadata: chunk.metadata,
        embedding: chunk.values,
      }));
      await collection.upsertObject(sourceKey, rows);
      return rows.map((row) => `${sourceKey}#${row.chunkIndex}`);
    },
    async search(orgId, bucket, name, text, topK) {
      const context = createHandlerContext({
        service: VectorService,
        method: VectorService.method.search,
        protocolName: "in-process",
        requestMethod: "POST",
        url: "in-process://actions",
        contextValues: createContextValues().set(principalKey, {
          orgId,
          orgName: await organizationName(orgId),
          keyId: "service:actions",
          roles: new Set(["data.viewer"]),
        }),
      });
      const request = create(SearchRequestSchema, {
        bucket,
        collectionName: name,
        query: { case: "text", value: text },
        topK,
        includeContent: true,
      });
      const answer = await search(request, context);
      return (answer.results ?? []).map((result) => ({
        key: result.object?.key ?? "",
        score: result.score ?? 0,
        content: result.content ?? "",
      }));
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
