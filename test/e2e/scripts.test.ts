import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// Publishing scripts and reading the tool catalog, over HTTP as a third party would.
let acme: TestOrganization;
beforeAll(async () => {
  acme = await createOrganization("scripts");
});

async function call(method: string, path: string, body?: unknown) {
  const response = await request(`${apiUrl()}${path}`, {
    method: method as "GET",
    headers: { ...acme.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
}

const source = (greeting: string) => `dsl: script/1
description: Says ${greeting}.
inputs:
  type: object
  required: [who]
  properties:
    who: {type: string}
steps:
  - id: render
    execute:
      tool: template.render
      input: {template: "${greeting} {{ who }}", values: {who: "\${inputs.who}"}}
output: {text: "\${steps.render.output.text}"}
`;

describe("scripts", () => {
  it("publishes versions, reads them back and activates an earlier one", async () => {
    const v1 = await call("POST", "/v1/script/scripts", {
      name: "greet",
      source: source("Hello"),
      env: { TONE: "warm" },
    });
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({
      name: "greet",
      activeVersion: 1,
      latestVersion: 1,
      description: "Says Hello.",
      toolsRequired: ["template.render"],
    });
    expect((v1.json.contract as { inputs: unknown }).inputs).toMatchObject({ type: "object", required: ["who"] });
    expect((await call("GET", "/v1/script/scripts/greet/env")).json).toEqual({
      vars: [{ key: "TONE", value: "warm" }],
    });

    const again = await call("POST", "/v1/script/scripts", { name: "greet", source: source("Hello") });
    expect(again.json).toMatchObject({ activeVersion: 1, latestVersion: 1 });
    const v2 = await call("POST", "/v1/script/scripts", { name: "greet", source: source("Hi") });
    expect(v2.json).toMatchObject({ activeVersion: 2, latestVersion: 2, description: "Says Hi." });

    const read = await call("GET", "/v1/script/scripts/greet?version=1");
    expect(read.json).toMatchObject({
      script: { name: "greet", activeVersion: 2 },
      version: { version: 1, source: source("Hello") },
    });
    expect((read.json.version as { sourceSha256: string }).sourceSha256).toMatch(/^[0-9a-f]{64}$/);

    expect((await call("POST", "/v1/script/scripts/greet/activate", { version: 1 })).json).toMatchObject({
      activeVersion: 1,
      description: "Says Hello.",
    });
    expect((await call("POST", "/v1/script/scripts/greet/activate", { version: 7 })).status).toBe(404);
    expect((await call("GET", "/v1/script/scripts/nothing")).status).toBe(404);
  });

  it("refuses a bad document with INVALID_ARGUMENT naming the line and field", async () => {
    const bad = await call("POST", "/v1/script/scripts", {
      name: "broken",
      source: "dsl: script/1\nsteps:\n  - id: a\n    exeucte: {tool: sleep}\n",
    });
    expect([bad.status, bad.json.code]).toEqual([400, "invalid_argument"]);
    expect(bad.json.message).toMatch(/4:5/);
    expect(bad.json.message).toMatch(/\/steps\/0/);
    expect((await call("GET", "/v1/script/scripts/broken")).status).toBe(404);
    expect((await call("POST", "/v1/script/scripts", { name: "bad name", source: source("x") })).status).toBe(400);
  });

  it("lists scripts a page at a time", async () => {
    for (const name of ["list-a", "list-b", "list-c"])
      await call("POST", "/v1/script/scripts", { name, source: source(name) });
    const first = await call("GET", "/v1/script/scripts?pageSize=2");
    const names = (first.json.scripts as { name: string }[]).map((s) => s.name);
    expect(names).toHaveLength(2);
    expect(first.json.nextPageToken).not.toBe("");
    const all: string[] = [];
    for await (const script of acme.client.script.listScriptsAll({ pageSize: 2 })) all.push(script.name);
    expect(all).toEqual([...all].sort());
    expect(all).toEqual(expect.arrayContaining(["greet", "list-a", "list-b", "list-c"]));
  });
});

describe("tools", () => {
  it("lists the native tool set with typed inputs and runtime", async () => {
    const { json } = await call("GET", "/v1/script/tools?pageSize=500");
    const tools = json.tools as {
      name: string;
      inputs: { name: string }[];
      runtime: { language: string; timeout: string };
    }[];
    expect(tools.map((t) => t.name)).toEqual([
      "artifact.write",
      "csv.format",
      "embeddings.embed",
      "http.request",
      "json.transform",
      "list.rank",
      "llm.complete",
      "sleep",
      "table.profile",
      "template.render",
      "text.redact",
      "text.split",
    ]);
    const http = tools.find((t) => t.name === "http.request")!;
    expect(http.inputs.map((i) => i.name)).toEqual(expect.arrayContaining(["method", "url", "headers", "body"]));
    expect(http.runtime.language).toBe("native");
    expect(http.runtime.timeout).toMatch(/^[0-9hms]+$/);
  });
});

describe("templates", () => {
  it("lists and reads the shipped templates without a token", async () => {
    const listed = await request(`${apiUrl()}/v1/script/templates?category=embedding&pageSize=1`);
    const page = (await listed.body.json()) as {
      templates: { id: string; toolsRequired: string[] }[];
      totalCount: number;
      nextPageToken: string;
    };
    expect(listed.statusCode).toBe(200);
    expect(page.totalCount).toBe(10);
    expect(page.templates.map((t) => t.id)).toEqual(["code_embedding_index"]);
    expect(page.nextPageToken).not.toBe("");
    const read = await request(`${apiUrl()}/v1/script/templates/text_embedding_index`);
    const template = (await read.body.json()) as { info: { id: string; category: string }; dslContent: string };
    expect(template.info).toMatchObject({ id: "text_embedding_index", category: "embedding" });
    expect(template.dslContent).toMatch(/^dsl: script\/1/m);
    const missing = await request(`${apiUrl()}/v1/script/templates/nope`);
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
  });
});
