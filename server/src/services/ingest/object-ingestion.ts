import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type {
  PipelineTarget,
  SourceReader,
  TemplateRunner,
  VectorChunk,
  VectorSink,
  VectorTarget,
} from "./ingest-ports.js";
import type { JobObjectRow, JobRow, JobStore } from "./job-store.js";
import { extractText, mediaTypeOf, UnsupportedContentError } from "./text-extraction.js";

export type ObjectOutcome =
  | { status: "succeeded"; change: "put" | "delete"; etag: string; chunks: number }
  | { status: "skipped" }
  | { status: "failed"; error: string; permanent: boolean };

export interface ObjectIngestionContext {
  readonly job: JobRow;
  readonly pipeline: PipelineTarget;
  readonly target: VectorTarget;
  readonly reader: SourceReader;
  readonly runner: TemplateRunner;
  readonly vectors: VectorSink;
  readonly jobs: JobStore;
  readonly maxObjectBytes: number;
  /** The etag the pipeline last ingested of this object, if any. */
  readonly ingestedEtag: string | undefined;
}

/** Inputs the pipeline sets per object; a collection's template inputs never override them. */
const PER_OBJECT_INPUTS = ["text", "source_key", "mime_type", "extracted_at"] as const;

/**
 * One object through a vector pipeline: read it from its source, extract its text, run the index
 * template's script on it (chunk and embed), and replace the object's chunks in the collection. A
 * deletion removes its chunks. An object whose content did not change since the pipeline last
 * ingested it is skipped unless the job forces it.
 */
export async function ingestObject(
  context: ObjectIngestionContext,
  object: JobObjectRow,
  signal: AbortSignal,
): Promise<ObjectOutcome> {
  const { job, target } = context;
  if (object.change === "delete") {
    await context.vectors.deleteObject(job.orgId, job.bucket, target, object.key);
    return { status: "succeeded", change: "delete", etag: "", chunks: 0 };
  }
  let { threadId, etag } = object;
  if (threadId === "") {
    let content;
    try {
      content = await context.reader.read(object.key, context.maxObjectBytes);
    } catch (error) {
      return { status: "failed", error: `reading ${object.key} failed: ${messageOf(error)}`, permanent: false };
    }
    etag = content.etag;
    if (!job.selection.force && context.ingestedEtag === etag) return { status: "skipped" };
    const mediaType = mediaTypeOf(object.key, content.contentType, content.bytes);
    let text: string;
    try {
      text = await extractText(object.key, mediaType, content.bytes);
    } catch (error) {
      if (error instanceof UnsupportedContentError) return { status: "failed", error: error.message, permanent: true };
      throw error;
    }
    // The collection's chunking, unless its template inputs say otherwise, then what the pipeline sets per object.
    const input: JsonObject =
      target.chunkSize > 0 ? { chunk_size: target.chunkSize, chunk_overlap: target.chunkOverlap } : {};
    Object.assign(input, withoutPerObject(target.templateInputs), {
      text,
      source_key: object.key,
      mime_type: mediaType,
      extracted_at: new Date().toISOString(),
    });
    threadId = await context.runner.start(job.orgId, context.pipeline.templateId, input);
    await context.jobs.startObject(job.id, object.key, threadId, etag);
  }
  const output = await context.runner.output(job.orgId, threadId, signal);
  const chunks = chunksOf(output, target);
  if (typeof chunks === "string") return { status: "failed", error: `${object.key}: ${chunks}`, permanent: true };
  await context.vectors.replaceObject(job.orgId, job.bucket, target, object.key, chunks);
  return { status: "succeeded", change: "put", etag, chunks: chunks.length };
}

function withoutPerObject(inputs: JsonObject): JsonObject {
  const rest: JsonObject = { ...inputs };
  for (const name of PER_OBJECT_INPUTS) delete rest[name];
  return rest;
}

/** The template output's `vectors`, checked against the collection; a string says what is wrong. */
export function chunksOf(output: JsonValue, target: VectorTarget): VectorChunk[] | string {
  const vectors = isObject(output) ? output.vectors : undefined;
  if (!Array.isArray(vectors)) return "the index template's output has no `vectors` list";
  // Vectors of another model would be silently incomparable with the collection's.
  const model = isObject(output) ? output.embedded_with : undefined;
  if (typeof model === "string" && target.embedModel !== "" && model !== target.embedModel) {
    return `the template embedded with ${model}, but the collection holds ${target.embedModel} vectors`;
  }
  const chunks: VectorChunk[] = [];
  for (const [i, item] of vectors.entries()) {
    if (!isObject(item) || typeof item.id !== "string" || !Array.isArray(item.values)) {
      return `vectors[${i}] is not {id, values, content, metadata}`;
    }
    if (
      item.values.length !== target.dimensions ||
      !item.values.every((v) => typeof v === "number" && Number.isFinite(v))
    ) {
      return `vectors[${i}] has ${item.values.length} values, not the collection's ${target.dimensions} finite numbers`;
    }
    chunks.push({
      id: item.id,
      values: item.values as number[],
      content: typeof item.content === "string" ? item.content : "",
      metadata: isObject(item.metadata) ? item.metadata : {},
    });
  }
  return chunks;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
