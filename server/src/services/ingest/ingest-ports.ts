import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";

/**
 * What the ingest service needs of the rest of the platform, as narrow interfaces the composition
 * root fills: the pipeline catalog (where objects go), the sources (where they come from), the
 * vector engine (where chunks land) and the script service (what turns an object into chunks).
 * The ingest code never reads another service's tables.
 */

/** The part of a vector destination an ingest run needs. */
export interface VectorTarget {
  readonly collectionName: string;
  readonly physicalName: string;
  readonly dimensions: number;
  readonly embedModel: string;
  readonly chunkSize: number;
  readonly chunkOverlap: number;
  readonly templateInputs: JsonObject;
  readonly enableBm25: boolean;
}

export interface PipelineTarget {
  readonly pipelineId: string;
  readonly bucket: string;
  /** The template whose script the pipeline runs per object (an `*_index` template for vectors). */
  readonly templateId: string;
  /** Display name of the destination, for a rule's `binding`. */
  readonly destinationName: string;
  readonly facet: string;
  /** Set for a vector destination; other facets are not ingested yet. */
  readonly vector?: VectorTarget;
}

export interface PipelineDirectory {
  /** The pipeline of this organization and bucket; undefined when there is none. */
  getPipeline(orgId: string, bucket: string, pipelineId: string): Promise<PipelineTarget | undefined>;
}

/** One object of a source, as a listing gives it. */
export interface SourceObject {
  readonly key: string;
  /** Changes whenever the content changes (an S3 ETag, an HTTP ETag or Last-Modified). */
  readonly etag: string;
  readonly size: number;
  readonly contentType: string;
}

export interface SourceContent {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  /** The etag of the content read (as a listing would give it). */
  readonly etag: string;
}

export interface SourceReader {
  /** Every object under `prefix` ("" for all). */
  list(prefix: string): AsyncIterable<SourceObject>;
  /** One object's content; at most `maxBytes` (larger objects are refused with a clear error). */
  read(key: string, maxBytes: number): Promise<SourceContent>;
}

export interface SourceDirectory {
  /** Whether the source exists in this organization and bucket. */
  exists(orgId: string, bucket: string, sourceId: string): Promise<boolean>;
  /** The bucket's internal object-storage source, created with the bucket. */
  internalSourceId(orgId: string, bucket: string): Promise<string>;
  reader(orgId: string, bucket: string, sourceId: string): Promise<SourceReader>;
}

/** One chunk of an object, as the index template's output gives it. */
export interface VectorChunk {
  readonly id: string;
  readonly values: readonly number[];
  readonly content: string;
  readonly metadata: JsonObject;
}

export interface VectorSink {
  /** Replaces every chunk of `sourceKey` in the collection with `chunks`, atomically (creating the collection's table on first use). */
  replaceObject(
    orgId: string,
    bucket: string,
    target: VectorTarget,
    sourceKey: string,
    chunks: readonly VectorChunk[],
  ): Promise<void>;
  /** Removes every chunk of `sourceKey`. */
  deleteObject(orgId: string, bucket: string, target: VectorTarget, sourceKey: string): Promise<void>;
}

/** Runs a template's script for one object and waits for its output. */
export interface TemplateRunner {
  /** Starts the run and returns its thread id (stored, so a job taken over after a crash waits for it). */
  start(orgId: string, templateId: string, input: JsonObject): Promise<string>;
  /** The run's output once it ends; throws with the run's failure when it failed. */
  output(orgId: string, threadId: string, signal: AbortSignal): Promise<JsonValue>;
}
