import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTemplateCatalog, TemplateCatalogError } from "./template-catalog.js";
import type { TemplateCatalog } from "./template-catalog.js";

/** Catalog semantics over small fixture folders; the shipped templates are checked in shipped-templates.test.ts. */

interface Fixture {
  id: string;
  name?: string;
  description?: string;
  category?: string;
  tags?: string[];
  labels?: Record<string, string>;
  exampleInput?: unknown;
  /** Replaces the whole document. */
  dsl?: string;
  /** Replaces the whole metadata file. */
  meta?: string;
}

const folders: string[] = [];
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

function documentOf(fixture: Fixture): string {
  return [
    "dsl: script/1",
    `name: ${fixture.id}`,
    `description: ${JSON.stringify(fixture.description ?? `The ${fixture.id} fixture.`)}`,
    "inputs: {type: object, additionalProperties: false, properties: {pause: {type: string, default: 1s}}}",
    "steps:",
    "  - id: rest",
    '    execute: {tool: sleep, input: {duration: "${inputs.pause}"}}',
    "",
  ].join("\n");
}

function metaOf(fixture: Fixture): string {
  const {
    id,
    name = `Fixture ${fixture.id}`,
    category = "testing",
    tags = ["fixture"],
    labels = {},
    exampleInput = {},
  } = fixture;
  return JSON.stringify({ id, name, category, tags, labels, exampleInput }, null, 2);
}

async function folderWith(fixtures: readonly Fixture[], extraFiles: Record<string, string> = {}): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "templates-"));
  folders.push(folder);
  for (const fixture of fixtures) {
    await writeFile(join(folder, `${fixture.id}.yaml`), fixture.dsl ?? documentOf(fixture));
    await writeFile(join(folder, `${fixture.id}.meta.json`), fixture.meta ?? metaOf(fixture));
  }
  for (const [name, text] of Object.entries(extraFiles)) await writeFile(join(folder, name), text);
  return folder;
}

/** The start-up error of a folder. */
async function loadFailure(folder: string): Promise<TemplateCatalogError> {
  const error = await loadTemplateCatalog(folder).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(TemplateCatalogError);
  return error as TemplateCatalogError;
}

function failure(run: () => unknown): ConnectError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }
  throw new Error("expected a ConnectError");
}

const ids = (page: { templates: readonly { id: string }[] }) => page.templates.map((template) => template.id);

const FIXTURES: Fixture[] = [
  {
    id: "pdf_to_markdown",
    name: "PDF to Markdown",
    description: "Converts scanned PDF files to Markdown.",
    category: "extraction",
    tags: ["pdf", "ocr"],
    labels: { type: "text", output: "markdown" },
  },
  {
    id: "code_index",
    name: "Code index",
    description: "Embeds source files for code search.",
    category: "embedding",
    tags: ["embedding", "code"],
    labels: { type: "code" },
  },
  {
    id: "text_search",
    name: "Text search",
    description: "Embeds queries.",
    category: "embedding",
    tags: ["web", "search"],
    labels: { type: "text", stage: "search" },
  },
  {
    id: "invoice_reader",
    name: "Invoice reader",
    description: "Reads totals from invoices (PDF or image).",
    category: "extraction",
    tags: ["finance"],
    labels: { output: "json" },
  },
];

let catalog: TemplateCatalog;
beforeAll(async () => {
  catalog = await loadTemplateCatalog(await folderWith(FIXTURES));
});

describe("loading", () => {
  it("builds TemplateInfo from the document and its metadata, labels sorted by key", () => {
    const { info, dslContent } = catalog.getTemplate("pdf_to_markdown");
    expect(info.id).toBe("pdf_to_markdown");
    expect(info.name).toBe("PDF to Markdown");
    expect(info.description).toBe("Converts scanned PDF files to Markdown.");
    expect(info.category).toBe("extraction");
    expect(info.tags).toEqual(["pdf", "ocr"]);
    expect(info.toolsRequired).toEqual(["sleep"]);
    expect(info.labels.map(({ key, value }) => ({ key, value }))).toEqual([
      { key: "output", value: "markdown" },
      { key: "type", value: "text" },
    ]);
    expect(info.contract?.inputs).toEqual({
      type: "object",
      additionalProperties: false,
      properties: { pause: { type: "string", default: "1s" } },
    });
    expect(info.contract?.outputs).toEqual({ type: "object" });
    expect(dslContent).toBe(documentOf(FIXTURES[0] as Fixture));
  });

  it("lists every template by id, the README aside", async () => {
    const folder = await folderWith(FIXTURES.slice(0, 2), { "README.md": "# Templates\n", ".hidden": "ignored" });
    expect(ids((await loadTemplateCatalog(folder)).listTemplates({}))).toEqual(["code_index", "pdf_to_markdown"]);
  });

  it("reports a document that does not parse with its file, line and problem", async () => {
    const broken = documentOf({ id: "broken" }).replace("execute:", "exectue:");
    const error = await loadFailure(await folderWith([{ id: "broken", dsl: broken }]));
    expect(error.problems).toEqual([
      'broken.yaml: 7:5 /steps/0/exectue: unknown key "exectue" (did you mean "execute"?)',
    ]);
    expect(error.message).toContain("broken.yaml: 7:5");
  });

  it("lists the problems of every file at once", async () => {
    const folder = await folderWith([
      { id: "no_steps", dsl: "dsl: script/1\nname: no_steps\ndescription: x\n" },
      {
        id: "bad_meta",
        meta: '{"id": "bad_meta", "name": "Bad", "category": "Testing", "tags": [], "labels": {"Type": "x"}, "exampleInput": {}, "description": "duplicate"}',
      },
      { id: "other_id", meta: metaOf({ id: "something_else" }) },
      { id: "not_json", meta: "{id: not_json}" },
    ]);
    const error = await loadFailure(folder);
    expect(error.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^no_steps\.yaml: .*steps.*required/),
        "bad_meta.meta.json: /description: is not allowed (no such property)",
        expect.stringMatching(/^bad_meta\.meta\.json: \/category: must match pattern/),
        "bad_meta.meta.json: /tags: must NOT have fewer than 1 items",
        expect.stringMatching(/^bad_meta\.meta\.json: \/labels: property name must be valid/),
        'other_id.meta.json: id "something_else" must be the file\'s id "other_id"',
        expect.stringMatching(/^not_json\.meta\.json: not valid JSON/),
      ]),
    );
  });

  it("refuses a template whose example input its contract refuses", async () => {
    const error = await loadFailure(await folderWith([{ id: "example", exampleInput: { pause: 5, extra: true } }]));
    expect(error.problems).toEqual([
      "example.meta.json: the example input does not fit the contract of example.yaml: exampleInput/extra: is not allowed (no such property); exampleInput/pause: must be string",
    ]);
  });

  it("requires both files, an id-named document with a description, and nothing else in the folder", async () => {
    const folder = await folderWith(
      [
        { id: "renamed", dsl: documentOf({ id: "renamed" }).replace("name: renamed", "name: other") },
        {
          id: "silent",
          dsl: documentOf({ id: "silent" }).replace('description: "The silent fixture."', 'description: "  "'),
        },
      ],
      {
        "lonely.yaml": documentOf({ id: "lonely" }),
        "orphan.meta.json": metaOf({ id: "orphan" }),
        "notes.txt": "x",
        "Bad-Name.yaml": "x",
      },
    );
    const error = await loadFailure(folder);
    expect([...error.problems].sort()).toEqual(
      [
        'Bad-Name.yaml: the template id "Bad-Name" must be snake_case: a lowercase letter, then lowercase letters, digits or "_" (at most 64)',
        "lonely.yaml: lonely.meta.json is missing (every template has both files)",
        "notes.txt: unexpected file (a template is <id>.yaml with <id>.meta.json)",
        "orphan.meta.json: orphan.yaml is missing (every template has both files)",
        'renamed.yaml: name "other" must be the template id "renamed"',
        "silent.yaml: description is required: it is the template's description",
      ].sort(),
    );
  });

  it("fails when the folder cannot be read", async () => {
    const folder = await folderWith([]);
    const error = await loadFailure(join(folder, "missing"));
    expect(error.problems[0]).toMatch(/^cannot read the folder: ENOENT/);
  });

  it("accepts an empty folder", async () => {
    const folder = await folderWith([]);
    await mkdir(join(folder, ".git"));
    expect((await loadTemplateCatalog(folder)).listTemplates({})).toEqual({
      templates: [],
      nextPageToken: "",
      totalCount: 0,
    });
  });
});

describe("ListTemplates filters", () => {
  it("without filters lists everything by id", () => {
    const page = catalog.listTemplates({});
    expect(ids(page)).toEqual(["code_index", "invoice_reader", "pdf_to_markdown", "text_search"]);
    expect(page.totalCount).toBe(4);
    expect(page.nextPageToken).toBe("");
  });

  it("tags match any of the given tags, case-insensitively", () => {
    expect(ids(catalog.listTemplates({ tags: ["ocr", "web"] }))).toEqual(["pdf_to_markdown", "text_search"]);
    expect(ids(catalog.listTemplates({ tags: ["OCR"] }))).toEqual(["pdf_to_markdown"]);
    expect(ids(catalog.listTemplates({ tags: ["nothing"] }))).toEqual([]);
  });

  it("labels match when any one key/value pair matches, key and value both", () => {
    expect(
      ids(
        catalog.listTemplates({
          labels: [
            { key: "type", value: "code" },
            { key: "stage", value: "search" },
          ],
        }),
      ),
    ).toEqual(["code_index", "text_search"]);
    expect(ids(catalog.listTemplates({ labels: [{ key: "type", value: "text" }] }))).toEqual([
      "pdf_to_markdown",
      "text_search",
    ]);
    expect(ids(catalog.listTemplates({ labels: [{ key: "type", value: "search" }] }))).toEqual([]);
    expect(ids(catalog.listTemplates({ labels: [{ key: "output", value: "JSON" }] }))).toEqual([]);
  });

  it("category matches exactly, case-insensitively", () => {
    expect(ids(catalog.listTemplates({ category: "EXTRACTION" }))).toEqual(["invoice_reader", "pdf_to_markdown"]);
    expect(ids(catalog.listTemplates({ category: "embed" }))).toEqual([]);
  });

  it("search is a case-insensitive substring of the name, the description or a tag, not the id", () => {
    expect(ids(catalog.listTemplates({ search: "markdown" }))).toEqual(["pdf_to_markdown"]);
    expect(ids(catalog.listTemplates({ search: "PDF" }))).toEqual(["invoice_reader", "pdf_to_markdown"]);
    expect(ids(catalog.listTemplates({ search: "financ" }))).toEqual(["invoice_reader"]);
    expect(ids(catalog.listTemplates({ search: "code search" }))).toEqual(["code_index"]);
    expect(ids(catalog.listTemplates({ search: "_index" }))).toEqual([]);
    expect(ids(catalog.listTemplates({ search: "   " }))).toHaveLength(4);
  });

  it("AND-s the filters of different kinds, and totalCount counts the matches", () => {
    const page = catalog.listTemplates({ category: "embedding", labels: [{ key: "type", value: "text" }] });
    expect(ids(page)).toEqual(["text_search"]);
    expect(page.totalCount).toBe(1);
    expect(ids(catalog.listTemplates({ tags: ["pdf", "finance"], search: "invoice", category: "extraction" }))).toEqual(
      ["invoice_reader"],
    );
    expect(catalog.listTemplates({ tags: ["pdf"], category: "embedding" }).totalCount).toBe(0);
  });

  it("refuses empty tags and label keys, naming the field", () => {
    const tag = failure(() => catalog.listTemplates({ tags: ["pdf", " "] }));
    expect([tag.code, tag.rawMessage]).toEqual([Code.InvalidArgument, "tags[1]: must not be empty"]);
    const label = failure(() => catalog.listTemplates({ labels: [{ key: "", value: "x" }] }));
    expect([label.code, label.rawMessage]).toEqual([Code.InvalidArgument, "labels[0].key: must not be empty"]);
  });
});

describe("ListTemplates pages", () => {
  let large: TemplateCatalog;
  beforeAll(async () => {
    const many = Array.from({ length: 205 }, (_, index): Fixture => ({
      id: `t${String(index).padStart(3, "0")}`,
      tags: [index % 2 === 0 ? "even" : "odd"],
    }));
    large = await loadTemplateCatalog(await folderWith(many));
  });

  it("serves 50 by default, with a token for the rest and the total on every page", () => {
    const first = large.listTemplates({});
    expect(first.templates).toHaveLength(50);
    expect(first.templates[0]?.id).toBe("t000");
    expect(first.totalCount).toBe(205);
    expect(first.nextPageToken).toBe(Buffer.from("t049").toString("base64url"));
    const second = large.listTemplates({ pageToken: first.nextPageToken });
    expect(second.templates[0]?.id).toBe("t050");
    expect(second.totalCount).toBe(205);
  });

  it("lowers a page size above 200 to 200 and ends with an empty token", () => {
    const first = large.listTemplates({ pageSize: 1000 });
    expect(first.templates).toHaveLength(200);
    const last = large.listTemplates({ pageSize: 1000, pageToken: first.nextPageToken });
    expect(ids(last)).toEqual(["t200", "t201", "t202", "t203", "t204"]);
    expect(last.nextPageToken).toBe("");
  });

  it("pages through filtered results without repeating or skipping, and no token when a page ends exactly", () => {
    const seen: string[] = [];
    let token = "";
    do {
      const page = large.listTemplates({ tags: ["odd"], pageSize: 34, pageToken: token });
      expect(page.totalCount).toBe(102);
      seen.push(...ids(page));
      token = page.nextPageToken;
    } while (token !== "");
    expect(seen).toHaveLength(102);
    expect(new Set(seen).size).toBe(102);
    expect(seen.every((id) => Number(id.slice(1)) % 2 === 1)).toBe(true);
  });

  it("takes a token of another filter: it only says where to start", () => {
    const token = large.listTemplates({ pageSize: 3 }).nextPageToken;
    expect(ids(large.listTemplates({ tags: ["even"], pageSize: 2, pageToken: token }))).toEqual(["t004", "t006"]);
  });

  it("refuses a negative page size and a token it did not issue", () => {
    const size = failure(() => large.listTemplates({ pageSize: -1 }));
    expect([size.code, size.rawMessage]).toEqual([Code.InvalidArgument, "page_size: must be 0 or more, not -1"]);
    for (const pageToken of ["%%%", Buffer.from("Not An Id").toString("base64url")]) {
      const token = failure(() => large.listTemplates({ pageToken }));
      expect([token.code, token.rawMessage]).toEqual([
        Code.InvalidArgument,
        "page_token: is not a token from a previous ListTemplates response",
      ]);
    }
  });
});

describe("GetTemplate", () => {
  it("answers NOT_FOUND naming the id, and INVALID_ARGUMENT without one", () => {
    const missing = failure(() => catalog.getTemplate("no_such_template"));
    expect([missing.code, missing.rawMessage]).toEqual([Code.NotFound, 'template "no_such_template" does not exist']);
    const empty = failure(() => catalog.getTemplate(""));
    expect([empty.code, empty.rawMessage]).toEqual([Code.InvalidArgument, "id is required"]);
  });

  it("hands out copies: changing an answer changes no later answer", () => {
    const first = catalog.getTemplate("code_index").info;
    first.tags.push("changed");
    first.name = "changed";
    catalog.listTemplates({}).templates[0]?.labels.splice(0);
    const again = catalog.getTemplate("code_index").info;
    expect(again.name).toBe("Code index");
    expect(again.tags).toEqual(["embedding", "code"]);
    expect(again.labels).toHaveLength(1);
  });
});
