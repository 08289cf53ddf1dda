import { createHash, randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// Thread artifacts through the running binary: a script writes a text file and a binary one with
// artifact.write, ListArtifacts lists them with signed links (SDK and HTTP/JSON), and the links
// download the exact bytes with no credentials, while changed links and other organizations get
// nothing.
let acme: TestOrganization;
let other: TestOrganization;
let threadId: string;
const text = "# Report\n\nhéllo ✓ — written by a step\n";
const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(50_000)]);
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

const script = `dsl: script/1
inputs:
  type: object
  required: [title, text, payload]
  properties:
    title: {type: string}
    text: {type: string}
    payload: {type: string, description: base64}
steps:
  - id: report
    execute: {tool: artifact.write, input: {name: "reports/\${inputs.title}.md", content: "\${inputs.text}", contentType: "text/markdown; charset=utf-8"}}
  - id: data
    execute: {tool: artifact.write, input: {name: data/blob.bin, contentBase64: "\${inputs.payload}"}}
`;

beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("artifacts"), createOrganization("outsider")]);
  await acme.client.script.createScript({ name: "writer", source: script });
  ({ threadId } = await acme.client.script.createThread({
    scriptName: "writer",
    inputJson: JSON.stringify({ title: "summary", text, payload: binary.toString("base64") }),
  }));
  for await (const event of acme.client.script.watchThread({ threadId })) {
    if (event.event.case === "failed") throw new Error(`the thread failed: ${event.event.value.error}`);
  }
  expect((await acme.client.script.getThread({ threadId })).status).toBe(ThreadStatus.COMPLETED);
});

describe("thread artifacts", () => {
  it("are listed through the SDK by path, with name, type, size and a link on the api listener", async () => {
    const { artifacts } = await acme.client.script.listArtifacts({ threadId });
    expect(artifacts.map(({ name, path, contentType, sizeBytes }) => ({ name, path, contentType, sizeBytes }))).toEqual(
      [
        {
          name: "blob.bin",
          path: "data/blob.bin",
          contentType: "application/octet-stream",
          sizeBytes: BigInt(binary.length),
        },
        {
          name: "summary.md",
          path: "reports/summary.md",
          contentType: "text/markdown; charset=utf-8",
          sizeBytes: BigInt(Buffer.byteLength(text)),
        },
      ],
    );
    for (const artifact of artifacts)
      expect(artifact.downloadUrl.startsWith(`${apiUrl()}/v1/blobs/threads/${threadId}/artifacts/`)).toBe(true);
  });

  it("download byte-exact with no credentials, with their headers", async () => {
    const { artifacts } = await acme.client.script.listArtifacts({ threadId });
    const [data, report] = artifacts;
    const file = await request(data!.downloadUrl);
    expect(file.statusCode).toBe(200);
    expect(Buffer.from(await file.body.arrayBuffer()).equals(binary)).toBe(true);
    expect(file.headers).toMatchObject({
      "content-type": "application/octet-stream",
      "content-length": String(binary.length),
      etag: `"${sha256(binary)}"`,
      "content-disposition": 'attachment; filename="blob.bin"',
      "x-content-type-options": "nosniff",
      "accept-ranges": "bytes",
    });
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(String(file.headers["cache-control"]))?.[1]);
    expect(maxAge).toBeGreaterThan(800);
    expect(maxAge).toBeLessThanOrEqual(900);

    const page = await request(report!.downloadUrl);
    expect(page.headers["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(page.headers.etag).toBe(`"${sha256(text)}"`);
    expect(await page.body.text()).toBe(text);

    const part = await request(data!.downloadUrl, { headers: { range: "bytes=250-260" } });
    expect(part.statusCode).toBe(206);
    expect(part.headers["content-range"]).toBe(`bytes 250-260/${binary.length}`);
    expect(Buffer.from(await part.body.arrayBuffer()).equals(binary.subarray(250, 261))).toBe(true);
    const head = await request(report!.downloadUrl, { method: "HEAD" });
    expect([head.statusCode, head.headers["content-length"]]).toEqual([200, String(Buffer.byteLength(text))]);
    await head.body.dump();
  });

  it("refuse changed or unsigned links with 403", async () => {
    const { artifacts } = await acme.client.script.listArtifacts({ threadId });
    const url = artifacts[1]!.downloadUrl;
    for (const changed of [
      url.replace("name=summary.md", "name=summary.html"),
      url.replace("summary.md?", "SUMMARY.md?"),
      url.replace(/signature=[^&]+/, "signature=AAAA"),
      url.split("?")[0]!,
    ]) {
      const answer = await request(changed);
      expect(answer.statusCode, changed).toBe(403);
      expect(answer.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(await answer.body.text()).toMatch(/^this download link is not (valid|signed)/);
    }
  });

  it("are NOT_FOUND to another organization", async () => {
    await expect(other.client.script.listArtifacts({ threadId })).rejects.toMatchObject({ code: Code.NotFound });
    const answer = await request(`${apiUrl()}/v1/script/threads/${threadId}/artifacts`, { headers: other.headers });
    expect(answer.statusCode).toBe(404);
    await answer.body.dump();
    await expect(acme.client.script.listArtifacts({ threadId: "nope" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/^thread_id/),
    });
  });

  it("are listed over HTTP/JSON, sizes as strings, with links that work", async () => {
    const answer = await request(`${apiUrl()}/v1/script/threads/${threadId}/artifacts`, { headers: acme.headers });
    expect(answer.statusCode).toBe(200);
    const body = (await answer.body.json()) as {
      artifacts: { name: string; path: string; contentType: string; sizeBytes: string; downloadUrl: string }[];
    };
    expect(body.artifacts.map((a) => [a.path, a.sizeBytes])).toEqual([
      ["data/blob.bin", String(binary.length)],
      ["reports/summary.md", String(Buffer.byteLength(text))],
    ]);
    const file = await request(body.artifacts[0]!.downloadUrl);
    expect(sha256(Buffer.from(await file.body.arrayBuffer()))).toBe(sha256(binary));
  });
});
