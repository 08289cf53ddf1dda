import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { text } from "node:stream/consumers";
import { Readable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Provider } from "../../../../../gen/platform/data/source/v1/source_pb.js";
import {
  CreateSourceRequestSchema,
  StoreCredentialRequestSchema,
} from "../../../../../gen/platform/data/source/v1/source_service_pb.js";
import type { SourceServiceImplementation } from "../../../../../gen/platform/data/source/v1/source_service_server.js";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { createSecretBox, type SecretBox } from "../../../crypto/secret-box.js";
import { createInternalSources } from "../internal-sources.js";
import { createSourceService } from "../source-handlers.js";
import { sourceContextOf } from "../source-test-context.js";
import { createSourceReaders, type SourceReaders } from "./create-source-readers.js";
import { SourceReadError, type InternalObjects, type SourceObject } from "./source-reader.js";

// The readers against small servers on loopback that answer as an S3-compatible store and as
// web servers do; the outbound guard is checked with private networks refused.

let database: TestDatabase;
let box: SecretBox;
let service: SourceServiceImplementation;
let server: Server;
let base: string;
const seen: string[] = [];

const OBJECTS: Record<string, { body: string; type: string }> = {
  "reports/a.txt": { body: "alpha", type: "text/plain" },
  "reports/b.json": { body: '{"b":2}', type: "application/json" },
  "reports/folder/": { body: "", type: "application/x-directory" },
};

/** Path-style S3 (`/customer-archive/...`) and a few web pages, on one loopback server. */
function answer(request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url!, "http://localhost");
  seen.push(`${request.method} ${url.pathname}`);
  if (url.pathname.startsWith("/customer-archive")) {
    if (!/Credential=AKIAEXAMPLE\//.test(request.headers.authorization ?? "")) {
      response.writeHead(403, { "content-type": "application/xml" });
      return response.end("<Error><Code>InvalidAccessKeyId</Code><Message>unknown key</Message></Error>");
    }
    const key = decodeURIComponent(url.pathname.slice("/customer-archive/".length));
    if (url.searchParams.get("list-type") === "2") {
      // Two pages: one object each, to exercise continuation.
      const keys = Object.keys(OBJECTS).filter((k) => k.startsWith(url.searchParams.get("prefix") ?? ""));
      const start = Number(url.searchParams.get("continuation-token") ?? "0");
      const page = keys.slice(start, start + 2);
      const more = start + 2 < keys.length;
      response.writeHead(200, { "content-type": "application/xml" });
      return response.end(
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
          `<Name>customer-archive</Name><KeyCount>${page.length}</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>${more}</IsTruncated>` +
          (more ? `<NextContinuationToken>${start + 2}</NextContinuationToken>` : "") +
          page
            .map(
              (k) =>
                `<Contents><Key>${k}</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified><ETag>"etag-${k.length}"</ETag><Size>${OBJECTS[k]!.body.length}</Size></Contents>`,
            )
            .join("") +
          `</ListBucketResult>`,
      );
    }
    const object = OBJECTS[key];
    if (!object) {
      response.writeHead(404, { "content-type": "application/xml" });
      return response.end("<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>");
    }
    response.writeHead(200, {
      "content-type": object.type,
      "content-length": object.body.length,
      etag: `"etag-${key.length}"`,
    });
    return response.end(object.body);
  }
  if (url.pathname === "/page.html") {
    response.writeHead(200, { "content-type": "text/html", etag: '"page-1"', "content-length": 11 });
    return response.end(request.method === "HEAD" ? undefined : "<p>page</p>");
  }
  if (url.pathname === "/moved") {
    response.writeHead(302, { location: "/page.html" });
    return response.end();
  }
  if (url.pathname === "/no-head" && request.method === "HEAD") {
    response.writeHead(405);
    return response.end();
  }
  if (url.pathname === "/no-head") {
    response.writeHead(200, { "content-type": "text/plain" });
    return response.end("streamed");
  }
  response.writeHead(404);
  response.end();
}

beforeAll(async () => {
  database = await openTestDatabase();
  box = createSecretBox(new Uint8Array(randomBytes(32)));
  service = createSourceService({ db: database.db, box, allowPrivateNetwork: true });
  server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database.close();
});

const noObjects: InternalObjects = {
  // eslint-disable-next-line require-yield
  async *list() {
    return;
  },
  read: () => Promise.reject(new SourceReadError("not_found", "none")),
};

function readers(allowPrivateNetwork: boolean, objects: InternalObjects = noObjects): SourceReaders {
  return createSourceReaders({ db: database.db, box, objects, allowPrivateNetwork });
}

async function all(objects: AsyncIterable<SourceObject>): Promise<SourceObject[]> {
  const found: SourceObject[] = [];
  for await (const object of objects) found.push(object);
  return found;
}

async function readError(work: () => Promise<unknown>): Promise<SourceReadError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof SourceReadError) return error;
    throw error;
  }
  throw new Error("expected a SourceReadError");
}

async function s3Source(orgId: string, secretAccessKey = "s3-secret", accessKeyId = "AKIAEXAMPLE") {
  const context = sourceContextOf(orgId);
  const credential = await service.storeCredential(
    create(StoreCredentialRequestSchema, {
      name: "s3",
      provider: Provider.AMAZON_S3,
      secret: { case: "accessKey", value: { accessKeyId, secretAccessKey } },
    }),
    context,
  );
  const source = await service.createSource(
    create(CreateSourceRequestSchema, {
      bucket: "b",
      name: `s3-${accessKeyId}`,
      provider: Provider.AMAZON_S3,
      credentialId: credential.credentialId,
      config: { bucket: "customer-archive", prefix: "reports/", endpoint: base },
    }),
    context,
  );
  return source.sourceId!;
}

async function webSource(orgId: string, urls: string[]) {
  const source = await service.createSource(
    create(CreateSourceRequestSchema, {
      bucket: "b",
      name: `web-${randomBytes(3).toString("hex")}`,
      provider: Provider.WEB,
      config: { urls },
    }),
    sourceContextOf(orgId),
  );
  return source.sourceId!;
}

describe(`source readers (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("lists an S3-compatible bucket under the prefix across pages and streams an object", async () => {
    const orgId = await database.createOrganization();
    const reader = await readers(true).forSource(orgId, "b", await s3Source(orgId));
    const objects = await all(reader.discover());
    expect(objects).toEqual([
      {
        key: "reports/a.txt",
        size: 5,
        etag: '"etag-13"',
        version: "",
        contentType: "",
        lastModified: Date.parse("2026-01-02T03:04:05.000Z"),
      },
      expect.objectContaining({ key: "reports/b.json", size: 7 }),
    ]);
    const read = await reader.read("reports/b.json");
    expect(read).toMatchObject({ size: 7, contentType: "application/json", etag: '"etag-14"' });
    expect(await text(read.body)).toBe('{"b":2}');
    expect((await readError(() => reader.read("reports/missing"))).kind).toBe("not_found");
    expect((await readError(() => reader.read("elsewhere/a.txt"))).kind).toBe("not_found");
  });

  it("tells a rejected credential apart", async () => {
    const orgId = await database.createOrganization();
    const reader = await readers(true).forSource(orgId, "b", await s3Source(orgId, "x", "AKIAOTHER"));
    const error = await readError(() => all(reader.discover()));
    expect(error.kind).toBe("credential");
    expect(error.message).not.toContain("AKIAOTHER");
  });

  it("reads web URLs: HEAD for discovery, redirects followed, a refused HEAD still listed", async () => {
    const orgId = await database.createOrganization();
    const urls = [`${base}/page.html`, `${base}/moved`, `${base}/no-head`, `${base}/gone`];
    const reader = await readers(true).forSource(orgId, "b", await webSource(orgId, urls));
    const objects = await all(reader.discover());
    expect(objects.map((o) => [o.key, o.size, o.etag, o.contentType])).toEqual([
      [urls[0], 11, '"page-1"', "text/html"],
      [urls[1], 11, '"page-1"', "text/html"],
      [urls[2], undefined, "", ""],
      [urls[3], undefined, "", ""],
    ]);
    expect(await text((await reader.read(urls[1]!)).body)).toBe("<p>page</p>");
    expect(await text((await reader.read(urls[2]!)).body)).toBe("streamed");
    expect((await readError(() => reader.read(urls[3]!))).kind).toBe("not_found");
    expect((await readError(() => reader.read(`${base}/not-listed`))).kind).toBe("not_found");
  });

  it("refuses loopback sources unless private networks are allowed, sending nothing", async () => {
    const orgId = await database.createOrganization();
    const s3 = await s3Source(orgId);
    const web = await webSource(orgId, [`${base}/page.html`]);
    const before = seen.length;
    const guarded = readers(false);
    expect((await readError(() => guarded.forSource(orgId, "b", s3))).kind).toBe("refused");
    const reader = await guarded.forSource(orgId, "b", web);
    expect((await readError(() => all(reader.discover()))).kind).toBe("refused");
    const refused = await readError(() => reader.read(`${base}/page.html`));
    expect(refused.kind).toBe("refused");
    expect(refused.message).toMatch(/loopback/);
    expect(seen.length).toBe(before);
  });

  it("reads the internal source through the storage service's objects", async () => {
    const orgId = await database.createOrganization();
    const id = await createInternalSources(database.db).ensureInternalSource(orgId, "b");
    const calls: string[] = [];
    const objects: InternalObjects = {
      async *list(org, bucket, prefix) {
        calls.push(`list ${org === orgId} ${bucket} ${prefix}`);
        yield { key: "k", size: 1, etag: "e", version: "v1", contentType: "text/plain", lastModified: 1 };
      },
      async read(_org, bucket, key) {
        calls.push(`read ${bucket} ${key}`);
        return { body: Readable.from([Buffer.from("x")]), size: 1, contentType: "text/plain", etag: "e" };
      },
    };
    const reader = await readers(false, objects).forSource(orgId, "b", id);
    expect((await all(reader.discover())).map((o) => o.key)).toEqual(["k"]);
    expect(await text((await reader.read("k")).body)).toBe("x");
    expect(calls).toEqual(["list true b ", "read b k"]);
  });

  it("answers not_found for another organization's source", async () => {
    const owner = await database.createOrganization();
    const other = await database.createOrganization();
    const web = await webSource(owner, [`${base}/page.html`]);
    expect((await readError(() => readers(true).forSource(other, "b", web))).kind).toBe("not_found");
  });
});
