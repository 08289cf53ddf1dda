import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// The secret service on the specification's paths: create, read in cleartext, list metadata
// only, rotate, delete idempotently.
let acme: TestOrganization;
beforeAll(async () => {
  acme = await createOrganization("secrets");
});

async function call(method: string, path: string, body?: unknown) {
  const response = await request(`${apiUrl()}${path}`, {
    method: method as "GET",
    headers: {
      authorization: `Bearer ${acme.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
}

describe("secrets over HTTP", () => {
  it("creates, reads back in cleartext, and lists metadata only", async () => {
    const created = await call("POST", "/v1/compute/secrets", {
      name: "docker_hub-1",
      value: { registrySecret: { username: "me", password: "s3cret" } },
    });
    expect(created.status).toBe(200);
    const metadata = created.json.metadata as Record<string, string>;
    expect(metadata).toMatchObject({ name: "docker_hub-1", type: "registry_secret" });
    expect(metadata.createdAtMs).toMatch(/^[0-9]+$/);
    const read = await call("GET", "/v1/compute/secrets/docker_hub-1");
    expect(read.json).toMatchObject({
      name: "docker_hub-1",
      value: { registrySecret: { username: "me", password: "s3cret", serverAddress: "" } },
    });
    const list = await call("GET", "/v1/compute/secrets");
    expect(JSON.stringify(list.json)).not.toContain("s3cret");
    expect(list.json.secrets).toEqual([metadata]);
  });

  it("overwrites a slot of the same name as a rotation: created stays, updated moves", async () => {
    const first = (
      await call("POST", "/v1/compute/secrets", { name: "gh", value: { gitSecret: { username: "bot", token: "one" } } })
    ).json.metadata as Record<string, string>;
    const second = (
      await call("POST", "/v1/compute/secrets", { name: "gh", value: { gitSecret: { username: "bot", token: "two" } } })
    ).json.metadata as Record<string, string>;
    expect(second.createdAtMs).toBe(first.createdAtMs);
    expect(BigInt(second.updatedAtMs!)).toBeGreaterThan(BigInt(first.updatedAtMs!));
    expect((await call("GET", "/v1/compute/secrets/gh")).json.value).toEqual({
      gitSecret: { username: "bot", token: "two" },
    });
  });

  it("deletes idempotently", async () => {
    await call("POST", "/v1/compute/secrets", { name: "temp", value: { gitSecret: { username: "u", token: "t" } } });
    expect((await call("DELETE", "/v1/compute/secrets/temp")).json).toEqual({ deleted: true });
    expect((await call("DELETE", "/v1/compute/secrets/temp")).json).toEqual({ deleted: false });
  });

  it("rejects bad input naming the field", async () => {
    const badName = await call("POST", "/v1/compute/secrets", {
      name: "x".repeat(65),
      value: { gitSecret: { username: "u", token: "t" } },
    });
    expect([badName.status, badName.json.code]).toEqual([400, "invalid_argument"]);
    expect(badName.json.message).toMatch(/name/);
    const noValue = await call("POST", "/v1/compute/secrets", { name: "novalue" });
    expect(noValue.status).toBe(400);
    expect(noValue.json.message).toMatch(/value/);
    const both = await call("POST", "/v1/compute/secrets", {
      name: "both",
      value: { gitSecret: { token: "t" }, registrySecret: { username: "u" } },
    });
    expect(both.status).toBe(400);
  });
});
