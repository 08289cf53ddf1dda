import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { failure } from "../../../../test/connect-failure.js";
import { createBlobDownloadHandler } from "../../../blob/blob-download-handler.js";
import { DOWNLOAD_LINK_TTL_MS } from "../../../blob/blob-url-signer.js";
import { call, contextFor, insertThread, openThreadTestKit, START_MS, type ThreadTestKit } from "./thread-test-kit.js";

let kit: ThreadTestKit;
let server: http.Server;
let orgId: string;
let otherOrg: string;
beforeAll(async () => {
  kit = await openThreadTestKit();
  [orgId, otherOrg] = await Promise.all([kit.database.createOrganization(), kit.database.createOrganization()]);
  const handler = createBlobDownloadHandler({
    store: kit.blobs,
    signer: kit.downloadLinks,
    next: (_request, response) => {
      response.statusCode = 404;
      response.end();
    },
  });
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  kit.downloadBase.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await kit.close();
});

const listArtifacts = (threadId: string, org = orgId) =>
  call(ScriptService.method.listArtifacts, kit.methods.listArtifacts, { threadId }, contextFor(org));
const bytes = (value: string) => new TextEncoder().encode(value);

describe(`ListArtifacts (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("lists a thread's files by path, each with its name and a download URL that serves it", async () => {
    kit.clock.ms = START_MS;
    const thread = await insertThread(kit, orgId);
    const owner = { threadId: thread.id, orgId, stepPath: "0" };
    await kit.artifacts.write(owner, "reports/summary.md", "text/markdown", bytes("# Summary"));
    await kit.artifacts.write(owner, "data.bin", "application/octet-stream", new Uint8Array([0, 1, 2, 255]));
    await kit.artifacts.write(owner, "reports/ünï code.txt", "text/plain; charset=utf-8", bytes("ü"));

    const { artifacts } = await listArtifacts(thread.id);
    expect(artifacts.map(({ name, path, contentType, sizeBytes }) => ({ name, path, contentType, sizeBytes }))).toEqual(
      [
        { name: "data.bin", path: "data.bin", contentType: "application/octet-stream", sizeBytes: 4n },
        { name: "summary.md", path: "reports/summary.md", contentType: "text/markdown", sizeBytes: 9n },
        { name: "ünï code.txt", path: "reports/ünï code.txt", contentType: "text/plain; charset=utf-8", sizeBytes: 2n },
      ],
    );
    const link = new URL(artifacts[1]!.downloadUrl);
    expect(`${link.origin}${link.pathname}`).toBe(
      `${kit.downloadBase.url}/v1/blobs/threads/${thread.id}/artifacts/reports/summary.md`,
    );
    expect(link.searchParams.get("expires")).toBe(String(START_MS + DOWNLOAD_LINK_TTL_MS));

    const summary = await request(artifacts[1]!.downloadUrl);
    expect(summary.statusCode).toBe(200);
    expect(summary.headers["content-type"]).toBe("text/markdown");
    expect(summary.headers["content-disposition"]).toBe('attachment; filename="summary.md"');
    expect(await summary.body.text()).toBe("# Summary");
    const binary = await request(artifacts[0]!.downloadUrl);
    expect(Buffer.from(await binary.body.arrayBuffer())).toEqual(Buffer.from([0, 1, 2, 255]));
    const unicode = await request(artifacts[2]!.downloadUrl);
    expect(unicode.headers["content-disposition"]).toBe(
      `attachment; filename="_n_ code.txt"; filename*=UTF-8''%C3%BCn%C3%AF%20code.txt`,
    );
    expect(await unicode.body.text()).toBe("ü");
  });

  it("signs fresh links at each call, which stop working once expired", async () => {
    kit.clock.ms = START_MS;
    const thread = await insertThread(kit, orgId);
    await kit.artifacts.write({ threadId: thread.id, orgId, stepPath: "1" }, "a.txt", "text/plain", bytes("a"));
    const [early] = (await listArtifacts(thread.id)).artifacts;
    kit.clock.ms = START_MS + DOWNLOAD_LINK_TTL_MS + 1;
    const stale = await request(early!.downloadUrl);
    expect(stale.statusCode).toBe(403);
    await stale.body.dump();
    const [fresh] = (await listArtifacts(thread.id)).artifacts;
    const answer = await request(fresh!.downloadUrl);
    expect([answer.statusCode, await answer.body.text()]).toEqual([200, "a"]);
  });

  it("answers an empty list for a thread without files", async () => {
    const thread = await insertThread(kit, orgId);
    expect((await listArtifacts(thread.id)).artifacts).toEqual([]);
  });

  it("answers NOT_FOUND for another organization's thread, and INVALID_ARGUMENT naming thread_id", async () => {
    const thread = await insertThread(kit, orgId);
    await kit.artifacts.write({ threadId: thread.id, orgId, stepPath: "0" }, "secret.txt", "text/plain", bytes("s"));
    expect((await failure(listArtifacts(thread.id, otherOrg))).code).toBe(Code.NotFound);
    const missing = await failure(listArtifacts(""));
    expect([missing.code, missing.rawMessage]).toEqual([Code.InvalidArgument, "thread_id is required"]);
    const malformed = await failure(listArtifacts("not-a-uuid"));
    expect(malformed.code).toBe(Code.InvalidArgument);
    expect(malformed.rawMessage).toMatch(/^thread_id: /);
  });
});
