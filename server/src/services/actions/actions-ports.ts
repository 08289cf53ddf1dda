import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";

/**
 * What the actions service needs of the rest of the platform, as narrow interfaces the composition
 * root (data-platform.ts) fills: the storage service's buckets and objects, text extraction, vector
 * collections and search, warehouse tables, the script service, and the server's capabilities.
 * The actions code never reads another service's tables.
 */

export interface StoredObjectInfo {
  readonly key: string;
  readonly size: number;
  /** As stored; may be empty or application/octet-stream. */
  readonly contentType: string;
}

export interface ObjectListingPage {
  readonly keys: readonly string[];
  /** Keys rolled up at the delimiter. */
  readonly prefixes: readonly string[];
  /** Where the next page starts; empty on the last page. */
  readonly next: string;
}

/** The storage service's buckets and objects of an organization; another organization's bucket does not exist. */
export interface ActionObjects {
  bucketExists(orgId: string, bucket: string): Promise<boolean>;
  head(orgId: string, bucket: string, key: string): Promise<StoredObjectInfo | undefined>;
  /** The object's bytes, or undefined when it does not exist; INVALID_ARGUMENT past `maxBytes`. */
  read(
    orgId: string,
    bucket: string,
    key: string,
    maxBytes: number,
  ): Promise<{ bytes: Uint8Array; contentType: string } | undefined>;
  /** The object's first bytes (at most `bytes` of them), for sniffing its type; undefined when it does not exist. */
  readStart(orgId: string, bucket: string, key: string, bytes: number): Promise<Uint8Array | undefined>;
  put(orgId: string, bucket: string, key: string, bytes: Uint8Array, contentType: string): Promise<StoredObjectInfo>;
  /** Copies the current version, keeping its content type. */
  copy(
    orgId: string,
    from: { readonly bucket: string; readonly key: string },
    to: { readonly bucket: string; readonly key: string },
  ): Promise<StoredObjectInfo>;
  list(
    orgId: string,
    bucket: string,
    options: { prefix: string; delimiter: string; after: string; maxKeys: number },
  ): Promise<ObjectListingPage>;
  delete(orgId: string, bucket: string, key: string): Promise<void>;
}

/** The ingest text extraction: an object's text, or an error naming its type when it has no extractor. */
export interface TextExtraction {
  /** The media type to use for an object: its stored type, else one guessed from the key, or from its first bytes when given. */
  mediaTypeOf(key: string, storedType: string, start?: Uint8Array): string;
  extract(key: string, mediaType: string, bytes: Uint8Array): string | Promise<string>;
}

export interface ChunkRecord {
  readonly id: string;
  readonly content: string;
  readonly metadata: JsonObject;
}

/** One chunk of an object as an index template outputs it (`vectors`). */
export interface ChunkVector {
  readonly id: string;
  readonly values: readonly number[];
  readonly content: string;
  readonly metadata: JsonObject;
}

export interface SimilarHit {
  readonly key: string;
  readonly score: number;
  readonly content: string;
}

/** The bucket's vector collections, looked up by name through the pipeline catalog. */
export interface ActionVectors {
  collectionExists(orgId: string, bucket: string, collection: string): Promise<boolean>;
  /** The chunks of these ids that exist, in the order given. */
  readChunks(orgId: string, bucket: string, collection: string, ids: readonly string[]): Promise<ChunkRecord[]>;
  /** Replaces every chunk of `sourceKey` in the collection (as ingestion does); answers the chunk ids written. */
  replaceObject(
    orgId: string,
    bucket: string,
    collection: string,
    sourceKey: string,
    chunks: readonly ChunkVector[],
  ): Promise<string[]>;
  search(orgId: string, bucket: string, collection: string, text: string, topK: number): Promise<SimilarHit[]>;
}

export interface TableColumn {
  readonly name: string;
  readonly type: string;
}

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly TableColumn[];
  readonly mergeKeys: readonly string[];
  readonly rowCount: number;
}

/** How rows are loaded into a table: written all or none, with the table created first when asked. */
export interface TableLoad {
  readonly mode: "append" | "merge";
  /** never: a missing table is NOT_FOUND; if_missing: created; replace: dropped first, then created. */
  readonly create: "never" | "if_missing" | "replace";
  /** The columns of a table the load creates; inferred from the rows when absent. */
  readonly columns?: readonly TableColumn[];
}

/** The bucket's warehouse tables (the TableStore), and its parsers of tabular objects. */
export interface ActionTables {
  /** Undefined when the bucket has no table of that name. */
  getTable(orgId: string, bucket: string, name: string): Promise<TableInfo | undefined>;
  readRows(orgId: string, bucket: string, name: string, page: { limit: number; offset: number }): Promise<JsonObject[]>;
  /** Answers the number of rows written. */
  load(orgId: string, bucket: string, name: string, rows: readonly JsonObject[], options: TableLoad): Promise<number>;
  /** A CSV text with a header row as rows, cells typed by inference. */
  parseCsv(text: string): JsonObject[];
  parseJsonLines(text: string): JsonObject[];
}

/** The template behind an action: what the catalog and the adaptation read of it. */
export interface ActionTemplate {
  readonly id: string;
  readonly description: string;
  /** The contract's inputs JSON Schema (an object schema); {} when it declares none. */
  readonly inputs: JsonObject;
  /** The contract's outputs JSON Schema; {} when it declares none. */
  readonly outputs: JsonObject;
}

export interface ActionTemplates {
  /** Undefined when the script service has no template of that id. */
  get(templateId: string): Promise<ActionTemplate | undefined>;
}

/** What a thread reports, as the runner translates it into ActionEvents. */
export type ThreadProgress =
  | { readonly kind: "yielded"; readonly stepPath: string; readonly stepName: string; readonly value: JsonValue }
  | { readonly kind: "completed" }
  | {
      readonly kind: "failed";
      readonly error: string;
      readonly failedStepPath: string;
      readonly failedStepName: string;
    }
  | { readonly kind: "cancelled"; readonly reason: string; readonly stepPath: string };

/** The script service, as a service principal of the organization. */
export interface ActionScripts {
  /** Publishes the template as the organization's script `action.<template id>` and starts a thread; answers its id. */
  start(orgId: string, templateId: string, input: JsonObject, metadata: Record<string, string>): Promise<string>;
  /** The thread's events from its start, ending after the terminal one (a replay for a thread already ended). */
  watch(orgId: string, threadId: string, signal?: AbortSignal): AsyncIterable<ThreadProgress>;
  /** The completed thread's output (null when it produced none). */
  output(orgId: string, threadId: string): Promise<JsonValue>;
}

/** Capabilities of this server that actions may require (`requires`). */
export interface ActionCapabilities {
  /** An LLM endpoint is configured for the llm.complete tool. */
  readonly llm: boolean;
}

export interface ActionsPorts {
  readonly objects: ActionObjects;
  readonly text: TextExtraction;
  readonly vectors: ActionVectors;
  /** Absent until warehouse tables are served: actions over tables are then FAILED_PRECONDITION. */
  readonly tables?: ActionTables | undefined;
  readonly templates: ActionTemplates;
  readonly scripts: ActionScripts;
  readonly capabilities: ActionCapabilities;
}
