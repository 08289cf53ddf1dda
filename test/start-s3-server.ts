import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";

/** The credentials s3rver checks signatures with. */
export const S3_SERVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** A client for the server, path-style, with its credentials. */
  readonly client: S3Client;
  /** Creates a bucket and answers its name. */
  createBucket(name: string): Promise<string>;
  stop(): Promise<void>;
}

interface KoaContext {
  readonly method: string;
  readonly status: number;
  get(name: string): string;
  response: { get(name: string): string; status: number; body: unknown; type: string };
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rverInstance {
  middleware: Middleware[];
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

/**
 * Starts s3rver (an S3-compatible server on the filesystem) on 127.0.0.1, a random port and a
 * temporary folder. s3rver ignores `If-Match` on GetObject; a middleware in front of it answers
 * 412 when the object's entity tag differs, as S3 does, so reads pinned to a version can be tested.
 */
export async function startS3Server(): Promise<S3Server> {
  const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true, vhostBuckets: false });
  server.middleware.unshift(async (ctx, next) => {
    await next();
    const wanted = ctx.get("if-match");
    if (!wanted || (ctx.method !== "GET" && ctx.method !== "HEAD") || ctx.response.status >= 300) return;
    if (ctx.response.get("etag") !== wanted) {
      const body = ctx.response.body as { destroy?: () => void } | undefined;
      body?.destroy?.();
      ctx.response.status = 412;
      ctx.response.type = "application/xml";
      ctx.response.body =
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>';
    }
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: S3_SERVER_CREDENTIALS,
  });
  return {
    endpoint,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async stop() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
