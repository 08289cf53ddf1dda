import { readdirSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { isJsonObject } from "../dsl/cel-json.js";
import type { JsonObject, JsonValue } from "../dsl/cel-json.js";
import { compileContract } from "../dsl/contract.js";
import { parseScript } from "../dsl/parse-script.js";
import { walkSteps } from "../dsl/step-paths.js";
import { toolsRequired } from "../dsl/tools-required.js";
import { createNativeToolSource } from "../tools/native-tools.js";
import type { Tool } from "../tools/tool.js";
import { loadTemplateCatalog, SHIPPED_TEMPLATES_DIR } from "./template-catalog.js";
import type { TemplateCatalog, TemplateEntry } from "./template-catalog.js";

/**
 * The templates in server/templates, checked without running them (there is no engine to run
 * them yet): they load, use only native tools with inputs those tools accept, and their example
 * inputs fit their contracts. The embedding pair is checked against what the data platform
 * resolves from it.
 */

let catalog: TemplateCatalog;
let nativeTools: Map<string, Tool>;
beforeAll(async () => {
  catalog = await loadTemplateCatalog(SHIPPED_TEMPLATES_DIR);
  nativeTools = new Map((await createNativeToolSource().listTools("")).map((tool) => [tool.name, tool]));
});

const entry = (id: string): TemplateEntry => {
  const found = catalog.entries.find((candidate) => candidate.info.id === id);
  if (found === undefined) throw new Error(`no shipped template ${id}`);
  return found;
};

describe("the shipped catalog", () => {
  it("has at least eight templates over several categories, extraction and embedding among them", () => {
    expect(catalog.entries.length).toBeGreaterThanOrEqual(8);
    const categories = new Set(catalog.entries.map((template) => template.info.category));
    expect(categories.size).toBeGreaterThanOrEqual(5);
    expect([...categories]).toEqual(expect.arrayContaining(["extraction", "embedding"]));
    expect(catalog.entries.map((template) => template.info.id)).toEqual(
      expect.arrayContaining([
        "web_page_extraction",
        "document_chunking",
        "text_embedding_index",
        "text_embedding_search",
        "summarize_with_citations",
        "classify_and_route",
        "webhook_fanout",
        "approval_gated_publish",
      ]),
    );
  });

  it("lists the embedding templates by category and by the `type` label", () => {
    expect(catalog.listTemplates({ category: "embedding" }).templates.map((template) => template.id)).toEqual([
      "code_embedding_index",
      "code_embedding_search",
      "face_embedding_index",
      "face_embedding_search",
      "object_embedding_index",
      "object_embedding_search",
      "text_embedding_index",
      "text_embedding_search",
      "visual_embedding_index",
      "visual_embedding_search",
    ]);
    expect(catalog.listTemplates({ labels: [{ key: "type", value: "text" }] }).totalCount).toBe(2);
  });
});

describe("the action templates (server/actions)", () => {
  it("are listed under the category `action`, each tagged `action` and labelled with its action", () => {
    const actions = catalog.listTemplates({ category: "action" }).templates;
    expect(actions.map((template) => template.id)).toEqual([
      "action_combine_texts",
      "action_describe_table",
      "action_embed_into_collection",
      "action_export_chunks_json",
      "action_export_table_csv",
      "action_extract_text",
      "action_find_similar_objects",
      "action_import_table",
      "action_redact_pii",
      "action_summarize",
    ]);
    for (const template of actions) {
      expect(template.tags).toContain("action");
      const action = template.labels.find((label) => label.key === "action")?.value;
      expect(`action_${action}`).toBe(template.id);
    }
  });
});

// Read when the tests are collected, so that every template added to the folder is covered.
const SHIPPED_IDS = readdirSync(SHIPPED_TEMPLATES_DIR)
  .filter((name) => name.endsWith(".yaml"))
  .map((name) => name.slice(0, -".yaml".length));

describe.each(SHIPPED_IDS)("%s", (id) => {
  it("parses, and its info is derived from the document", () => {
    const { info, dslContent } = entry(id);
    const document = parseScript(dslContent);
    expect(document.name).toBe(id);
    expect(info.description).toBe(document.description);
    expect(info.toolsRequired).toEqual(toolsRequired(document));
    expect({ inputs: info.contract?.inputs, outputs: info.contract?.outputs }).toEqual(
      compileContract(document).toProto(),
    );
    expect(info.name).not.toBe("");
    expect(info.tags.length).toBeGreaterThan(0);
    expect(catalog.getTemplate(id).dslContent).toBe(dslContent);
  });

  it("needs only native tools", () => {
    const missing = entry(id).info.toolsRequired.filter((tool) => !nativeTools.has(tool));
    expect(missing).toEqual([]);
  });

  it("gives every tool only inputs it declares, and every input it requires", () => {
    for (const { step } of walkSteps(entry(id).document)) {
      if (step.primitive !== "execute") continue;
      const tool = nativeTools.get(step.execute.tool) as Tool;
      const input = step.execute.input.source;
      // A whole-input expression ("${…}") is only known at run time.
      if (!isJsonObject(input)) continue;
      const names = new Set(tool.inputs.map((param) => param.name));
      expect({ step: step.id, unknown: Object.keys(input).filter((name) => !names.has(name)) }).toEqual({
        step: step.id,
        unknown: [],
      });
      const required = tool.inputs.filter((param) => param.required).map((param) => param.name);
      expect({ step: step.id, missing: required.filter((name) => !Object.hasOwn(input, name)) }).toEqual({
        step: step.id,
        missing: [],
      });
    }
  });

  it("accepts its example input", () => {
    const { document, exampleInput } = entry(id);
    const accepted = compileContract(document).validateInput(exampleInput);
    expect(accepted).toMatchObject(exampleInput);
  });

  it("refuses an input with an unknown field", () => {
    const { document, exampleInput } = entry(id);
    expect(() => compileContract(document).validateInput({ ...exampleInput, not_an_input: 1 })).toThrow(
      /input_json\/not_an_input: is not allowed/,
    );
  });
});

/** The `const` of an input property of a contract, as the pipeline service resolves it. */
function pinned(inputs: JsonObject | undefined, name: string): JsonValue | undefined {
  const properties = inputs?.properties;
  const property = isJsonObject(properties) ? properties[name] : undefined;
  return isJsonObject(property) ? property.const : undefined;
}

describe("the text embedding templates (data platform, template resolution)", () => {
  it("pin embed_model, 768 dimensions and no BM25 in the contract, and say `type: text`", () => {
    for (const id of ["text_embedding_index", "text_embedding_search"]) {
      const { info } = entry(id);
      const inputs = info.contract?.inputs;
      expect(pinned(inputs, "embed_model")).toBe("nomic-embed-text-v1.5");
      expect(pinned(inputs, "dimensions")).toBe(768);
      expect(info.labels.find((label) => label.key === "type")?.value).toBe("text");
      expect(info.category).toBe("embedding");
    }
    expect(pinned(entry("text_embedding_index").info.contract?.inputs, "enable_bm25")).toBe(false);
  });

  it("declare no distance metric, sparse mode or embedding type (cosine, none, float)", () => {
    for (const id of ["text_embedding_index", "text_embedding_search"]) {
      for (const name of ["distance_metric", "sparse_mode", "embedding_type"])
        expect(pinned(entry(id).info.contract?.inputs, name)).toBeUndefined();
    }
  });

  it("fill the pinned values in by default and refuse another model or size", () => {
    const contract = compileContract(entry("text_embedding_index").document);
    const input = contract.validateInput({
      text: "hello",
      source_key: "a.txt",
    });
    expect(input).toMatchObject({
      embed_model: "nomic-embed-text-v1.5",
      dimensions: 768,
      enable_bm25: false,
      chunk_size: 1500,
      chunk_overlap: 200,
    });
    expect(() => contract.validateInput({ ...input, dimensions: 1024 })).toThrow(
      /input_json\/dimensions: must be equal to constant/,
    );
    expect(() => contract.validateInput({ ...input, embed_model: "text-embedding-3-small" })).toThrow(
      /input_json\/embed_model/,
    );
  });

  it("produce vectors with the metadata the collections store", () => {
    const outputs = entry("text_embedding_index").info.contract?.outputs as JsonObject;
    const vectors = (outputs.properties as JsonObject).vectors as JsonObject;
    const metadata = ((vectors.items as JsonObject).properties as JsonObject).metadata as JsonObject;
    expect(metadata.required).toEqual(["source_key", "chunk_index", "chunk_total", "mime_type", "extracted_at"]);
  });

  it("point at each other by label (`*_index` to `*_search`)", () => {
    const label = (id: string, key: string) => entry(id).info.labels.find((candidate) => candidate.key === key)?.value;
    expect(label("text_embedding_index", "search_template")).toBe("text_embedding_search");
    expect(label("text_embedding_search", "index_template")).toBe("text_embedding_index");
  });
});

/** The index templates of the data platform's "Template resolution" table. */
const VECTOR_TEMPLATES = [
  { modality: "text", dimensions: 768, embeddingType: undefined },
  { modality: "code", dimensions: 1024, embeddingType: "float" },
  { modality: "visual", dimensions: 1024, embeddingType: "float" },
  { modality: "object", dimensions: 1024, embeddingType: undefined },
  { modality: "face", dimensions: 512, embeddingType: undefined },
] as const;

describe.each(VECTOR_TEMPLATES)("the $modality embedding templates", ({ modality, dimensions, embeddingType }) => {
  const index = `${modality}_embedding_index`;
  const search = `${modality}_embedding_search`;
  const label = (id: string, key: string) => entry(id).info.labels.find((candidate) => candidate.key === key)?.value;

  it("resolve the table's dimensions, a model, the modality and the declared embedding type, with no BM25", () => {
    const indexInputs = entry(index).info.contract?.inputs;
    const searchInputs = entry(search).info.contract?.inputs;
    expect(pinned(indexInputs, "dimensions")).toBe(dimensions);
    expect(pinned(searchInputs, "dimensions")).toBe(dimensions);
    expect(pinned(indexInputs, "embed_model")).toEqual(expect.any(String));
    expect(pinned(searchInputs, "embed_model")).toBe(pinned(indexInputs, "embed_model"));
    expect(pinned(indexInputs, "enable_bm25")).toBe(false);
    expect(pinned(indexInputs, "embedding_type")).toBe(embeddingType);
    expect(pinned(searchInputs, "embedding_type")).toBe(embeddingType);
    for (const name of ["distance_metric", "sparse_mode"]) expect(pinned(indexInputs, name)).toBeUndefined();
    expect(label(index, "type")).toBe(modality);
    expect(label(search, "type")).toBe(modality);
  });

  it("pair up by labels and embed through embeddings.embed, never by raw HTTP", () => {
    expect([label(index, "stage"), label(index, "search_template")]).toEqual(["index", search]);
    expect([label(search, "stage"), label(search, "index_template")]).toEqual(["search", index]);
    for (const id of [index, search]) {
      expect(entry(id).info.toolsRequired).toContain("embeddings.embed");
      expect(entry(id).info.toolsRequired).not.toContain("http.request");
      const properties = entry(id).info.contract?.inputs?.properties as JsonObject;
      for (const gone of ["endpoint", "endpoint_model", "api_key_env"]) expect(properties[gone]).toBeUndefined();
    }
  });

  it("produce vectors of the collection's length with the metadata collections store", () => {
    const outputs = entry(index).info.contract?.outputs as JsonObject;
    const vectors = (outputs.properties as JsonObject).vectors as JsonObject;
    const item = (vectors.items as JsonObject).properties as JsonObject;
    expect(item.values).toMatchObject({ minItems: dimensions, maxItems: dimensions });
    expect((item.metadata as JsonObject).required).toEqual([
      "source_key",
      "chunk_index",
      "chunk_total",
      "mime_type",
      "extracted_at",
    ]);
  });
});

describe("the object embedding index", () => {
  it("requires labels", () => {
    const contract = compileContract(entry("object_embedding_index").document);
    const { exampleInput } = entry("object_embedding_index");
    const { labels: _labels, ...withoutLabels } = exampleInput as JsonObject;
    expect(() => contract.validateInput(withoutLabels)).toThrow(/labels/);
    expect(() => contract.validateInput({ ...exampleInput, labels: [] })).toThrow(/labels/);
  });
});
