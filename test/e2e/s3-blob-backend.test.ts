import { randomBytes } from "node:crypto";
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient } from "../../sdk/src/index.js";
import { S3_SERVER_CREDENTIALS, startS3Server, type S3Server } from "../start-s3-server.js";
import { buildImage, layoutDigest, ociWorkspace, randomContent, skopeo } from "./oci-tools.js";
import { runAdmin, s3ClientFor, startPlatformServer, type StartedServer } from "./platform-server.js";

// The real binary storing its objects in an S3-compatible service (s3rver) chosen by --blob-url,
// driven through its own S3 listener: what a client stores lands in the backend bucket under
// the configured prefix, and reads back whole and by range.
let backend: S3Server;
let server: StartedServer;
let s3: S3Client;
let apiKey: string;

beforeAll(async () => {
  backend = await startS3Server();
  await backend.createBucket("platform-objects");
  const blobUrl = `s3://platform-objects/prod?endpoint=${encodeURIComponent(backend.endpoint)}&region=us-east-1&forcePathStyle=true`;
  server = await startPlatformServer(["--blob-url", blobUrl], {
    env: {
      AWS_ACCESS_KEY_ID: S3_SERVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_SERVER_CREDENTIALS.secretAccessKey,
    },
  });
  const created = await runAdmin(server.dataDir, ["create-org", "blobs-on-s3"], {
    DATABASE_URL: server.databaseUrl ?? "",
  });
  const parsed = created.json as { organization: { id: string }; apiKey: string };
  const { organization } = parsed;
  apiKey = parsed.apiKey;
  const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "blobs-on-s3" });
  s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
}, 120_000);

afterAll(async () => {
  s3?.destroy();
  await server?.stop();
  await backend?.stop();
});

async function backendKeys(): Promise<string[]> {
  const listed = await backend.client.send(new ListObjectsV2Command({ Bucket: "platform-objects" }));
  return (listed.Contents ?? []).map((o) => o.Key ?? "");
}

describe("the server on an S3 blob store", () => {
  it("stores objects in the backend bucket and reads them back", { timeout: 120_000 }, async () => {
    await s3.send(new CreateBucketCommand({ Bucket: "reports" }));
    await s3.send(
      new PutObjectCommand({
        Bucket: "reports",
        Key: "2026/summary.txt",
        Body: "hello from s3",
        ContentType: "text/plain",
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: "reports", Key: "2026/summary.txt" }));
    expect(await got.Body!.transformToString()).toBe("hello from s3");
    expect(got.ContentType).toBe("text/plain");

    // Larger than one part of the blob store: written to the backend as a multipart upload.
    const large = randomBytes(20 * 1024 * 1024);
    await new Upload({ client: s3, params: { Bucket: "reports", Key: "large.bin", Body: large } }).done();
    const ranged = await s3.send(
      new GetObjectCommand({ Bucket: "reports", Key: "large.bin", Range: `bytes=${large.length - 10}-` }),
    );
    expect(Buffer.from(await ranged.Body!.transformToByteArray())).toEqual(large.subarray(large.length - 10));
    const whole = await s3.send(new GetObjectCommand({ Bucket: "reports", Key: "large.bin" }));
    expect(Buffer.from(await whole.Body!.transformToByteArray()).equals(large)).toBe(true);

    const keys = await backendKeys();
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(keys.every((key) => key.startsWith("prod/"))).toBe(true);
    expect(keys.some((key) => key.startsWith("prod/.uploads/"))).toBe(false);
  });

  it("keeps the registry's layers in the backend and pulls them back unchanged", { timeout: 120_000 }, async () => {
    const workspace = await ociWorkspace();
    const source = `${workspace.dir}/source`;
    await buildImage(source, "v1", [{ "data/a.bin": randomContent(3 * 1024 * 1024) }, { "data/b.bin": "small" }]);
    const target = `docker://${new URL(server.urls.registry!).host}/blobs-on-s3/app:v1`;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `x:${apiKey}`,
      `oci:${source}:v1`,
      target,
    ]);
    const back = `${workspace.dir}/back`;
    await skopeo(workspace.policy, [
      "copy",
      "--src-tls-verify=false",
      "--src-creds",
      `x:${apiKey}`,
      target,
      `oci:${back}:v1`,
    ]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
    expect((await backendKeys()).some((key) => key.startsWith("prod/registry/"))).toBe(true);
  });
});
