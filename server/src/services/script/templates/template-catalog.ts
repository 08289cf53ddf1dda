import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clone, create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  LabelEntrySchema,
  ScriptContractSchema,
  TemplateInfoSchema,
} from "../../../../../gen/platform/script/v1/catalog_pb.js";
import type { TemplateInfo } from "../../../../../gen/platform/script/v1/catalog_pb.js";
import type { JsonObject, JsonValue } from "../dsl/cel-json.js";
import { compileContract } from "../dsl/contract.js";
import { compileSchema, describeErrors } from "../dsl/json-schema.js";
import { parseScript } from "../dsl/parse-script.js";
import type { ScriptDocument } from "../dsl/script-document.js";
import { formatProblem, ScriptValidationError } from "../dsl/script-validation-error.js";
import { toolsRequired } from "../dsl/tools-required.js";

/**
 * The public templates: read-only scripts shipped in server/templates, served by ListTemplates and
 * GetTemplate. Each template is two files (server/templates/README.md): `<id>.yaml`, the DSL
 * document (its `description` is the template's), and `<id>.meta.json`, what the DSL has no key
 * for: `{id, name, category, tags, labels, exampleInput}`.
 *
 * Everything is read and checked once, at start-up: a template that does not parse, metadata that
 * is wrong, or an example input its contract refuses stops the server with every problem listed
 * by file, rather than a broken template being served for ever.
 */

export const SHIPPED_TEMPLATES_DIR = fileURLToPath(new URL("../../../../templates/", import.meta.url));

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export interface TemplateEntry {
  readonly info: TemplateInfo;
  /** The `<id>.yaml` source as shipped: GetTemplate's `dsl_content`. */
  readonly dslContent: string;
  readonly document: ScriptDocument;
  /** A realistic input (from the metadata), valid against the contract. */
  readonly exampleInput: JsonObject;
}

export interface TemplateQuery {
  /** Templates carrying any of these tags (case-insensitive); empty: no tag filter. */
  readonly tags?: readonly string[];
  /** Templates carrying any of these key/value pairs (exact); empty: no label filter. */
  readonly labels?: readonly { readonly key: string; readonly value: string }[];
  /** Exact category, case-insensitive; empty: any. */
  readonly category?: string;
  /** Case-insensitive substring of the name, the description or a tag; empty: no text filter. */
  readonly search?: string;
  /** 0 (or absent): 50; larger than 200: 200; negative: INVALID_ARGUMENT. */
  readonly pageSize?: number;
  readonly pageToken?: string;
}

export interface TemplatePage {
  readonly templates: TemplateInfo[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
  /** Templates matching the filters, over all pages. */
  readonly totalCount: number;
}

export interface TemplateCatalog {
  /** Every template, by id ascending. */
  readonly entries: readonly TemplateEntry[];
  listTemplates(query: TemplateQuery): TemplatePage;
  /** NOT_FOUND naming the id when there is no such template. */
  getTemplate(id: string): { info: TemplateInfo; dslContent: string };
}

/** Start-up failure: every problem of the template folder, each prefixed with its file. */
export class TemplateCatalogError extends Error {
  override name = "TemplateCatalogError";
  constructor(
    readonly dir: string,
    readonly problems: readonly string[],
  ) {
    super(
      `the templates in ${dir} are not valid (${problems.length} ${problems.length === 1 ? "problem" : "problems"}):${problems.map((problem) => `\n  ${problem}`).join("")}`,
    );
  }
}

/** TemplateInfo `id`: snake_case, as the contract's example `pdf_to_markdown`. */
const TEMPLATE_ID = /^[a-z][a-z0-9_]{0,63}$/;
const DSL_SUFFIX = ".yaml";
const META_SUFFIX = ".meta.json";

/** The metadata file's schema (checked with the DSL's strict JSON Schema compiler). */
const META_SCHEMA: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["id", "name", "category", "tags", "labels", "exampleInput"],
  properties: {
    id: { type: "string", pattern: TEMPLATE_ID.source },
    name: { type: "string", minLength: 1, maxLength: 100 },
    category: { type: "string", pattern: "^[a-z][a-z0-9_-]{0,39}$" },
    tags: {
      type: "array",
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      items: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,39}$" },
    },
    labels: {
      type: "object",
      maxProperties: 20,
      propertyNames: { pattern: "^[a-z][a-z0-9_.-]{0,62}$" },
      additionalProperties: { type: "string", minLength: 1, maxLength: 63 },
    },
    exampleInput: { type: "object" },
  },
};

interface TemplateMeta {
  id: string;
  name: string;
  category: string;
  tags: string[];
  labels: Record<string, string>;
  exampleInput: JsonObject;
}

/** Reads, checks and indexes every template of `dir`; throws TemplateCatalogError. */
export async function loadTemplateCatalog(dir: string = SHIPPED_TEMPLATES_DIR): Promise<TemplateCatalog> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => !name.startsWith(".")).sort();
  } catch (error) {
    throw new TemplateCatalogError(dir, [
      `cannot read the folder: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const name of names) {
    const id = name.endsWith(META_SUFFIX)
      ? name.slice(0, -META_SUFFIX.length)
      : name.endsWith(DSL_SUFFIX)
        ? name.slice(0, -DSL_SUFFIX.length)
        : undefined;
    if (id === undefined) {
      if (name !== "README.md")
        problems.push(`${name}: unexpected file (a template is <id>${DSL_SUFFIX} with <id>${META_SUFFIX})`);
    } else if (!TEMPLATE_ID.test(id)) {
      problems.push(
        `${name}: the template id ${JSON.stringify(id)} must be snake_case: a lowercase letter, then lowercase letters, digits or "_" (at most 64)`,
      );
    } else {
      ids.add(id);
    }
  }
  const entries: TemplateEntry[] = [];
  for (const id of ids) {
    const entry = await readTemplate(dir, id, (problem) => problems.push(problem));
    if (entry !== undefined) entries.push(entry);
  }
  if (problems.length > 0) throw new TemplateCatalogError(dir, problems);
  return createCatalog(entries);
}

async function readTemplate(
  dir: string,
  id: string,
  report: (problem: string) => void,
): Promise<TemplateEntry | undefined> {
  const dslFile = id + DSL_SUFFIX;
  const metaFile = id + META_SUFFIX;
  const [dslContent, metaText] = await Promise.all([
    readText(dir, dslFile, metaFile, report),
    readText(dir, metaFile, dslFile, report),
  ]);
  if (dslContent === undefined || metaText === undefined) return undefined;

  let document: ScriptDocument | undefined;
  try {
    document = parseScript(dslContent);
  } catch (error) {
    if (!(error instanceof ScriptValidationError)) throw error;
    for (const problem of error.problems) report(`${dslFile}: ${formatProblem(problem)}`);
  }
  if (document !== undefined && document.name !== undefined && document.name !== id)
    report(`${dslFile}: name ${JSON.stringify(document.name)} must be the template id ${JSON.stringify(id)}`);
  if (document !== undefined && document.description.trim() === "")
    report(`${dslFile}: description is required: it is the template's description`);

  const meta = readMeta(metaFile, metaText, id, report);
  if (document === undefined || meta === undefined) return undefined;
  const contract = compileContract(document);
  try {
    contract.validateInput(meta.exampleInput, "exampleInput");
  } catch (error) {
    report(
      `${metaFile}: the example input does not fit the contract of ${dslFile}: ${error instanceof ConnectError ? error.rawMessage : String(error)}`,
    );
    return undefined;
  }
  const info = create(TemplateInfoSchema, {
    id,
    name: meta.name,
    description: document.description.trim(),
    tags: meta.tags,
    toolsRequired: toolsRequired(document),
    category: meta.category,
    contract: create(ScriptContractSchema, contract.toProto()),
    labels: Object.entries(meta.labels)
      .sort(([a], [b]) => compareIds(a, b))
      .map(([key, value]) => create(LabelEntrySchema, { key, value })),
  });
  return { info, dslContent, document, exampleInput: meta.exampleInput };
}

/** A template's file, or undefined with the problem reported (its pair names the other half). */
async function readText(
  dir: string,
  file: string,
  pair: string,
  report: (problem: string) => void,
): Promise<string | undefined> {
  try {
    return await readFile(join(dir, file), "utf8");
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    report(
      missing
        ? `${pair}: ${file} is missing (every template has both files)`
        : `${file}: cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

const metaSchema = compileSchema(META_SCHEMA);

function readMeta(file: string, text: string, id: string, report: (problem: string) => void): TemplateMeta | undefined {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    report(`${file}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const validate = metaSchema.validate;
  if (validate === undefined)
    throw new Error(`template-catalog: the metadata schema does not compile: ${JSON.stringify(metaSchema.problems)}`);
  if (!validate(value)) {
    // describeErrors gives "/tags/0: must match ..." lines, and ": ..." for the whole object.
    for (const line of describeErrors(validate.errors ?? [], ""))
      report(line.startsWith(":") ? `${file}${line}` : `${file}: ${line}`);
    return undefined;
  }
  const meta = value as unknown as TemplateMeta;
  if (meta.id !== id) {
    report(`${file}: id ${JSON.stringify(meta.id)} must be the file's id ${JSON.stringify(id)}`);
    return undefined;
  }
  return meta;
}

function createCatalog(unsorted: readonly TemplateEntry[]): TemplateCatalog {
  const entries = [...unsorted].sort((a, b) => compareIds(a.info.id, b.info.id));
  const byId = new Map(entries.map((entry) => [entry.info.id, entry]));
  // What `search` reads, lower-cased once.
  const searchText = new Map(
    entries.map((entry) => [
      entry.info.id,
      [entry.info.name, entry.info.description, ...entry.info.tags].map((text) => text.toLowerCase()),
    ]),
  );

  return {
    entries,

    listTemplates(query) {
      const size = pageSizeOf(query.pageSize ?? 0);
      const after = query.pageToken ? decodePageToken(query.pageToken) : undefined;
      const matches = entries.filter(filterOf(query, (id) => searchText.get(id) ?? []));
      const rest = after === undefined ? matches : matches.filter((entry) => compareIds(entry.info.id, after) > 0);
      const page = rest.slice(0, size);
      const last = page.at(-1);
      return {
        templates: page.map((entry) => clone(TemplateInfoSchema, entry.info)),
        nextPageToken: rest.length > size && last !== undefined ? encodePageToken(last.info.id) : "",
        totalCount: matches.length,
      };
    },

    getTemplate(id) {
      if (id === "") throw new ConnectError("id is required", Code.InvalidArgument);
      const entry = byId.get(id);
      if (entry === undefined) throw new ConnectError(`template ${JSON.stringify(id)} does not exist`, Code.NotFound);
      return { info: clone(TemplateInfoSchema, entry.info), dslContent: entry.dslContent };
    },
  };
}

/** The filters of a query, AND-ed; within tags and within labels, any one match passes. */
function filterOf(
  query: TemplateQuery,
  searchTextOf: (id: string) => readonly string[],
): (entry: TemplateEntry) => boolean {
  const tags = (query.tags ?? []).map((tag, index) => {
    if (tag.trim() === "") throw new ConnectError(`tags[${index}]: must not be empty`, Code.InvalidArgument);
    return tag.toLowerCase();
  });
  const labels = query.labels ?? [];
  labels.forEach((label, index) => {
    if (label.key === "") throw new ConnectError(`labels[${index}].key: must not be empty`, Code.InvalidArgument);
  });
  const category = (query.category ?? "").toLowerCase();
  const search = (query.search ?? "").trim().toLowerCase();
  return ({ info }) =>
    (tags.length === 0 || info.tags.some((tag) => tags.includes(tag.toLowerCase()))) &&
    (labels.length === 0 ||
      info.labels.some((own) => labels.some((wanted) => wanted.key === own.key && wanted.value === own.value))) &&
    (category === "" || info.category.toLowerCase() === category) &&
    (search === "" || searchTextOf(info.id).some((text) => text.includes(search)));
}

function pageSizeOf(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0)
    throw new ConnectError(`page_size: must be 0 or more, not ${pageSize}`, Code.InvalidArgument);
  return pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(pageSize, MAX_PAGE_SIZE);
}

/**
 * Page tokens are the base64url of the last id served (keyset paging on the sort key), bound to
 * nothing else: the catalog is fixed while the process runs, so a token stays valid, and a page
 * never repeats or skips a template. A token that does not decode to an id is INVALID_ARGUMENT.
 */
function encodePageToken(lastId: string): string {
  return Buffer.from(lastId, "utf8").toString("base64url");
}

function decodePageToken(token: string): string {
  const id = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString("utf8") : "";
  if (!TEMPLATE_ID.test(id))
    throw new ConnectError("page_token: is not a token from a previous ListTemplates response", Code.InvalidArgument);
  return id;
}

/** Code-unit order, as the tool catalog sorts names (ids are ASCII, so also byte order). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
