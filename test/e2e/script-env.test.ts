import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// The script service's environment methods on the specification's exact HTTP paths, as curl
// would call them, and through the SDK.
let acme: TestOrganization;
beforeAll(async () => {
  acme = await createOrganization("env");
});

async function call(method: string, path: string, body?: unknown, headers = acme.headers) {
  const response = await request(`${apiUrl()}${path}`, {
    method: method as "GET",
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

describe("tenant environment variables over HTTP", () => {
  it("PUT /v1/script/env sets, GET /v1/script/env/{key} reads", async () => {
    expect(await call("PUT", "/v1/script/env", { key: "REGION", value: "eu-west" })).toEqual({
      status: 200,
      json: { key: "REGION" },
    });
    expect(await call("GET", "/v1/script/env/REGION")).toEqual({
      status: 200,
      json: { key: "REGION", value: "eu-west" },
    });
  });

  it("POST /v1/script/env/import overwrites and adds, and counts", async () => {
    await call("PUT", "/v1/script/env", { key: "A", value: "old" });
    expect(await call("POST", "/v1/script/env/import", { vars: { A: "new", B: "b" } })).toEqual({
      status: 200,
      json: { count: 2 },
    });
    const list = await call("GET", "/v1/script/env");
    expect(list.json).toEqual({
      vars: [
        { key: "A", value: "new" },
        { key: "B", value: "b" },
        { key: "REGION", value: "eu-west" },
      ],
    });
  });

  it("DELETE /v1/script/env/{key} removes, and is quiet about an absent key", async () => {
    expect(await call("DELETE", "/v1/script/env/B")).toEqual({ status: 200, json: {} });
    expect(await call("DELETE", "/v1/script/env/B")).toEqual({ status: 200, json: {} });
    expect((await call("GET", "/v1/script/env/B")).status).toBe(404);
  });

  it("answers 400 naming the field for bad input, never 5xx", async () => {
    const missingKey = await call("PUT", "/v1/script/env", { value: "x" });
    expect(missingKey.status).toBe(400);
    expect(missingKey.json?.message).toMatch(/key/);
    const badKey = await call("PUT", "/v1/script/env", { key: "1 bad", value: "x" });
    expect([badKey.status, badKey.json?.code]).toEqual([400, "invalid_argument"]);
    expect(badKey.json?.message).toMatch(/key/);
    const wrongType = await call("PUT", "/v1/script/env", { key: "K", value: 12 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json?.message).toMatch(/value/);
    const unknownField = await call("PUT", "/v1/script/env", { key: "K", value: "v", colour: "red" });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json?.message).toMatch(/colour/);
    const response = await request(`${apiUrl()}/v1/script/env`, {
      method: "PUT",
      headers: { ...acme.headers, "content-type": "application/json" },
      body: '{"key": "K", "value": ',
    });
    expect(response.statusCode).toBe(400);
    expect(((await response.body.json()) as { message: string }).message).toMatch(/JSON/);
  });
});

describe("the per-script overlay over HTTP", () => {
  it("belongs to a published script: NOT_FOUND before, empty after publishing", async () => {
    expect((await call("GET", "/v1/script/scripts/extract/env")).status).toBe(404);
    const published = await call("POST", "/v1/script/scripts", {
      name: "extract",
      source: "dsl: script/1\nsteps:\n  - id: hi\n    yield: {value: hi}\n",
    });
    expect(published.status).toBe(200);
    expect(await call("GET", "/v1/script/scripts/extract/env")).toEqual({ status: 200, json: { vars: [] } });
  });

  it("PATCH upserts, keeps empty values, ignores absent deletions, returns the overlay sorted", async () => {
    const updated = await call("PATCH", "/v1/script/scripts/extract/env", {
      set: { Z: "z", A: "", M: "m" },
      delete: ["NOPE"],
    });
    expect(updated).toEqual({
      status: 200,
      json: {
        vars: [
          { key: "A", value: "" },
          { key: "M", value: "m" },
          { key: "Z", value: "z" },
        ],
      },
    });
    const again = await call("PATCH", "/v1/script/scripts/extract/env", { delete: ["M"] });
    expect(again.json).toEqual({
      vars: [
        { key: "A", value: "" },
        { key: "Z", value: "z" },
      ],
    });
    expect((await call("GET", "/v1/script/scripts/extract/env")).json).toEqual(again.json);
  });
});

describe("the same methods through the SDK", () => {
  it("round-trips over Connect", async () => {
    await acme.client.script.setEnvVar({ key: "SDK", value: "yes" });
    expect((await acme.client.script.getEnvVar({ key: "SDK" })).value).toBe("yes");
    await acme.client.script.createScript({
      name: "sdk-script",
      source: "dsl: script/1\nsteps:\n  - id: hi\n    yield: {value: hi}\n",
    });
    const { vars } = await acme.client.script.updateScriptEnv({ name: "sdk-script", set: { SDK: "" } });
    expect(vars.map((v) => [v.key, v.value])).toEqual([["SDK", ""]]);
  });
});
