import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import { extractText, mediaTypeOf } from "../ingest/text-extraction.js";
import type { ActionDefinition } from "./action-definition.js";
import type {
  ActionObjects,
  ActionScripts,
  ActionsPorts,
  ActionTables,
  ActionTemplate,
  ActionVectors,
  ChunkRecord,
  ChunkVector,
  TableColumn,
  TableLoad,
  ThreadProgress,
} from "./actions-ports.js";

/** In-memory stand-ins for the platform the actions service reaches through its ports, for tests. */

interface StoredObject {
  bytes: Uint8Array;
  contentType: string;
}

export class FakeObjects implements ActionObjects {
  readonly buckets = new Map<string, Map<string, StoredObject>>();
  copies = 0;
  puts = 0;
  reads = 0;

  addBucket(orgId: string, bucket: string) {
    this.buckets.set(`${orgId}/${bucket}`, new Map());
  }
  store(orgId: string, bucket: string, key: string, body: string | Uint8Array, contentType = "") {
    this.#bucket(orgId, bucket).set(key, { bytes: typeof body === "string" ? Buffer.from(body) : body, contentType });
  }
  keys(orgId: string, bucket: string) {
    return [...this.#bucket(orgId, bucket).keys()].sort();
  }
  text(orgId: string, bucket: string, key: string) {
    const object = this.#bucket(orgId, bucket).get(key);
    return object && Buffer.from(object.bytes).toString("utf8");
  }
  #bucket(orgId: string, bucket: string) {
    const found = this.buckets.get(`${orgId}/${bucket}`);
    if (!found) throw new ConnectError(`bucket ${bucket} not found`, Code.NotFound);
    return found;
  }

  async bucketExists(orgId: string, bucket: string) {
    return this.buckets.has(`${orgId}/${bucket}`);
  }
  async head(orgId: string, bucket: string, key: string) {
    const object = this.#bucket(orgId, bucket).get(key);
    return object && { key, size: object.bytes.length, contentType: object.contentType };
  }
  async read(orgId: string, bucket: string, key: string, maxBytes: number) {
    this.reads++;
    const object = this.#bucket(orgId, bucket).get(key);
    if (object && object.bytes.length > maxBytes) throw new ConnectError(`${key} is too large`, Code.InvalidArgument);
    return object && { bytes: object.bytes, contentType: object.contentType };
  }
  async readStart(orgId: string, bucket: string, key: string, bytes: number) {
    return this.#bucket(orgId, bucket).get(key)?.bytes.subarray(0, bytes);
  }
  async put(orgId: string, bucket: string, key: string, bytes: Uint8Array, contentType: string) {
    this.puts++;
    this.store(orgId, bucket, key, bytes, contentType);
    return { key, size: bytes.length, contentType };
  }
  async copy(orgId: string, from: { bucket: string; key: string }, to: { bucket: string; key: string }) {
    this.copies++;
    const object = this.#bucket(orgId, from.bucket).get(from.key)!;
    this.#bucket(orgId, to.bucket).set(to.key, { ...object });
    return { key: to.key, size: object.bytes.length, contentType: object.contentType };
  }
  async list(
    orgId: string,
    bucket: string,
    options: { prefix: string; delimiter: string; after: string; maxKeys: number },
  ) {
    const keys: string[] = [];
    const prefixes: string[] = [];
    let last = "";
    for (const key of this.keys(orgId, bucket)) {
      if (!key.startsWith(options.prefix) || key <= options.after) continue;
      const rest = key.slice(options.prefix.length);
      const cut = options.delimiter === "" ? -1 : rest.indexOf(options.delimiter);
      if (cut !== -1) {
        const prefix = options.prefix + rest.slice(0, cut + options.delimiter.length);
        if (prefixes.at(-1) === prefix || options.after.startsWith(prefix)) continue;
        if (keys.length + prefixes.length >= options.maxKeys) return { keys, prefixes, next: last };
        prefixes.push(prefix);
        last = prefix + "\u{10FFFF}";
      } else {
        if (keys.length + prefixes.length >= options.maxKeys) return { keys, prefixes, next: last };
        keys.push(key);
        last = key;
      }
    }
    return { keys, prefixes, next: "" };
  }
  async delete(orgId: string, bucket: string, key: string) {
    this.#bucket(orgId, bucket).delete(key);
  }
}

export class FakeVectors implements ActionVectors {
  /** `${orgId}/${bucket}/${collection}` -> chunks by id */
  readonly collections = new Map<string, Map<string, ChunkRecord & { sourceKey: string }>>();
  hits: { key: string; score: number; content: string }[] = [];
  searches: { text: string; topK: number }[] = [];

  addCollection(orgId: string, bucket: string, name: string, chunks: (ChunkRecord & { sourceKey: string })[] = []) {
    this.collections.set(`${orgId}/${bucket}/${name}`, new Map(chunks.map((chunk) => [chunk.id, chunk])));
  }
  async collectionExists(orgId: string, bucket: string, collection: string) {
    return this.collections.has(`${orgId}/${bucket}/${collection}`);
  }
  async readChunks(orgId: string, bucket: string, collection: string, ids: readonly string[]) {
    const chunks = this.collections.get(`${orgId}/${bucket}/${collection}`)!;
    return ids.flatMap((id) => {
      const chunk = chunks.get(id);
      return chunk ? [{ id, content: chunk.content, metadata: chunk.metadata }] : [];
    });
  }
  async replaceObject(
    orgId: string,
    bucket: string,
    collection: string,
    sourceKey: string,
    chunks: readonly ChunkVector[],
  ) {
    const stored = this.collections.get(`${orgId}/${bucket}/${collection}`)!;
    for (const [id, chunk] of stored) if (chunk.sourceKey === sourceKey) stored.delete(id);
    const ids = chunks.map((_, index) => `${sourceKey}#${index}`);
    chunks.forEach((chunk, index) =>
      stored.set(ids[index]!, { id: ids[index]!, content: chunk.content, metadata: chunk.metadata, sourceKey }),
    );
    return ids;
  }
  async search(_orgId: string, _bucket: string, _collection: string, text: string, topK: number) {
    this.searches.push({ text, topK });
    return this.hits.slice(0, topK);
  }
}

export class FakeTables implements ActionTables {
  readonly tables = new Map<string, { columns: TableColumn[]; mergeKeys: string[]; rows: JsonObject[] }>();
  writes = 0;

  async getTable(orgId: string, bucket: string, name: string) {
    const table = this.tables.get(`${orgId}/${bucket}/${name}`);
    return table && { name, columns: table.columns, mergeKeys: table.mergeKeys, rowCount: table.rows.length };
  }
  async load(orgId: string, bucket: string, name: string, rows: readonly JsonObject[], options: TableLoad) {
    const id = `${orgId}/${bucket}/${name}`;
    if (options.create === "replace") this.tables.delete(id);
    if (!this.tables.has(id)) {
      if (options.create === "never") throw new ConnectError(`table ${name} not found`, Code.NotFound);
      this.tables.set(id, { columns: [...(options.columns ?? this.inferColumns(rows))], mergeKeys: [], rows: [] });
    }
    this.writes++;
    const table = this.tables.get(id)!;
    if (options.mode === "merge" && table.mergeKeys.length === 0)
      throw new ConnectError("the table has no merge keys", Code.FailedPrecondition);
    table.rows.push(...rows);
    return rows.length;
  }
  async readRows(orgId: string, bucket: string, name: string, options: { limit: number; offset: number }) {
    const table = this.tables.get(`${orgId}/${bucket}/${name}`)!;
    return table.rows.slice(options.offset, options.offset + options.limit);
  }
  inferColumns(rows: readonly JsonObject[]): TableColumn[] {
    return Object.keys(rows[0] ?? {}).map((name) => ({
      name,
      type: typeof rows[0]![name] === "number" ? "number" : "string",
    }));
  }
  parseCsv(text: string): JsonObject[] {
    const [header, ...lines] = text.trim().split(/\r?\n/);
    const names = header!.split(",");
    return lines.map((line) => Object.fromEntries(line.split(",").map((value, i) => [names[i]!, value])));
  }
  parseJsonLines(text: string): JsonObject[] {
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as JsonObject);
  }
}

/** How a fake thread of a template behaves: its reports, then its output. */
export interface ScriptedRun {
  readonly reports?: ThreadProgress[];
  readonly output?: JsonValue;
  /** The thread never ends: its watch waits until it is aborted. */
  readonly endless?: boolean;
}

export class FakeScripts implements ActionScripts {
  readonly started: { orgId: string; templateId: string; input: JsonObject; metadata: Record<string, string> }[] = [];
  readonly behaviours = new Map<string, (input: JsonObject) => ScriptedRun>();
  /** Called while a thread is being watched, before its first report (a test looks at the RUNNING manifest). */
  onWatch: (() => Promise<void>) | undefined;
  #runs = new Map<string, ScriptedRun>();

  async start(orgId: string, templateId: string, input: JsonObject, metadata: Record<string, string>) {
    this.started.push({ orgId, templateId, input, metadata });
    const threadId = `thread-${this.started.length}`;
    const behaviour = this.behaviours.get(templateId) ?? (() => ({ output: input }));
    this.#runs.set(threadId, behaviour(input));
    return threadId;
  }
  async *watch(_orgId: string, threadId: string, signal?: AbortSignal) {
    await this.onWatch?.();
    const run = this.#runs.get(threadId)!;
    if (run.endless) {
      await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
      return;
    }
    yield* run.reports ?? [];
    if (!(run.reports ?? []).some((report) => report.kind !== "yielded")) yield { kind: "completed" } as ThreadProgress;
  }
  async output(_orgId: string, threadId: string) {
    return this.#runs.get(threadId)!.output ?? null;
  }
}

export class FakeTemplates {
  readonly templates = new Map<string, ActionTemplate>();
  async get(templateId: string) {
    return this.templates.get(templateId);
  }
}

export function fakePorts(options: { llm?: boolean; tables?: boolean } = {}) {
  const objects = new FakeObjects();
  const vectors = new FakeVectors();
  const tables = new FakeTables();
  const scripts = new FakeScripts();
  const templates = new FakeTemplates();
  const ports: ActionsPorts = {
    objects,
    text: { mediaTypeOf, extract: extractText },
    vectors,
    ...(options.tables === false ? {} : { tables }),
    templates,
    scripts,
    capabilities: { llm: options.llm ?? false },
  };
  return { ports, objects, vectors, tables, scripts, templates };
}

/** A definition with the defaults of a test action. */
export function testAction(fields: Partial<ActionDefinition> & { id: string }): ActionDefinition {
  return {
    template: `action_${fields.id}`,
    name: fields.id.replace(/_/g, " "),
    description: "",
    icon: "bolt",
    visibility: "primary",
    invoke: "sync",
    pillars: ["objects"],
    shapes: ["object_single"],
    acceptedContentTypes: [],
    acceptedExtensions: [],
    requires: [],
    bind: {},
    output: { kind: "JSON", route: "inline" },
    ...fields,
  };
}
