import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Provider, SourceStatus } from "../../../../gen/platform/data/source/v1/source_pb.js";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { createInternalSources, type InternalSources } from "./internal-sources.js";
import { createSourceService } from "./source-handlers.js";
import { Code, connectErrorOf, s3Source, sourceCaller, accessKey, type CreateInit } from "./source-test-context.js";

let database: TestDatabase;
let service: SourceServiceImplementation;
let internal: InternalSources;
const missingBuckets = new Set<string>();
beforeAll(async () => {
  database = await openTestDatabase();
  service = createSourceService({
    db: database.db,
    box: createSecretBox(new Uint8Array(randomBytes(32))),
    allowPrivateNetwork: false,
    bucketExists: async (_orgId, bucket) => !missingBuckets.has(bucket),
  });
  internal = createInternalSources(database.db);
});
afterAll(() => database.close());

const caller = async () => sourceCaller(service, await database.createOrganization());

describe(`source service (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("creates, reads, lists, updates and deletes an S3 source, its config stored normalised", async () => {
    const org = await caller();
    const created = await s3Source(org);
    expect(created).toMatchObject({
      bucket: "docs",
      name: "archive",
      provider: Provider.AMAZON_S3,
      internal: false,
      status: SourceStatus.ACTIVE,
      config: {
        bucket: "customer-archive",
        prefix: "reports/",
        endpoint: "https://minio.example.com",
        region: "us-east-1",
        force_path_style: true,
      },
    });
    expect(created.createdAt).toBe(created.updatedAt);
    expect(await org.getSource("docs", created.sourceId)).toEqual(created);

    const renamed = await org.updateSource({ bucket: "docs", sourceId: created.sourceId, description: "quarterly" });
    expect(renamed).toMatchObject({ name: "archive", description: "quarterly" });
    expect(renamed.updatedAt).toBeGreaterThan(created.updatedAt);
    const reconfigured = await org.updateSource({
      bucket: "docs",
      sourceId: created.sourceId,
      name: "reports",
      config: { bucket: "other", region: "eu-west-1" },
    });
    expect(reconfigured.config).toEqual({ bucket: "other", region: "eu-west-1", prefix: "", force_path_style: false });

    expect((await org.listSources({ bucket: "docs" })).sources.map((s) => s.name)).toEqual(["reports"]);
    await org.deleteSource("docs", created.sourceId);
    expect((await connectErrorOf(() => org.getSource("docs", created.sourceId))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(() => org.deleteSource("docs", created.sourceId))).code).toBe(Code.NotFound);
  });

  it("creates a web source without a credential and refuses one", async () => {
    const org = await caller();
    const web = await org.createSource({
      bucket: "docs",
      name: "handbook",
      provider: Provider.WEB,
      config: { urls: ["https://example.com/a.html", "http://example.com/b.pdf"] },
    });
    expect(web).toMatchObject({ provider: Provider.WEB, credentialId: "", config: { urls: expect.any(Array) } });
    const token = await org.storeCredential({
      name: "t",
      provider: Provider.GITHUB,
      secret: { case: "token", value: "ghp_x" },
    });
    const error = await connectErrorOf(() =>
      org.updateSource({ bucket: "docs", sourceId: web.sourceId, credentialId: token.credentialId }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/^credential_id must be empty/);
  });

  it("keeps the internal source: one per bucket, listed first, never updated or deleted", async () => {
    const org = await caller();
    const external = await s3Source(org, "first", "media");
    const id = await internal.ensureInternalSource(org.orgId, "media");
    expect(await internal.ensureInternalSource(org.orgId, "media")).toBe(id);
    const again = await Promise.all([1, 2, 3].map(() => internal.ensureInternalSource(org.orgId, "media")));
    expect(new Set(again)).toEqual(new Set([id]));

    const listed = await org.listSources({ bucket: "media" });
    expect(listed.sources.map((s) => [s.name, s.internal, s.provider])).toEqual([
      ["internal", true, Provider.INTERNAL],
      ["first", false, Provider.AMAZON_S3],
    ]);
    const deleting = await connectErrorOf(() => org.deleteSource("media", id));
    expect(deleting.code).toBe(Code.FailedPrecondition);
    expect(deleting.rawMessage).toMatch(/internal source cannot be deleted/);
    const updating = await connectErrorOf(() => org.updateSource({ bucket: "media", sourceId: id, name: "mine" }));
    expect(updating.code).toBe(Code.FailedPrecondition);
    expect((await org.getSource("media", id)).name).toBe("internal");

    const creating = await connectErrorOf(() =>
      org.createSource({ bucket: "media", name: "x", provider: Provider.INTERNAL }),
    );
    expect(creating.code).toBe(Code.InvalidArgument);
    expect(creating.rawMessage).toMatch(/^provider: PROVIDER_INTERNAL/);
    const reserved = await connectErrorOf(() =>
      org.updateSource({ bucket: "media", sourceId: external.sourceId, name: "internal" }),
    );
    expect(reserved.rawMessage).toMatch(/^name "internal" is reserved/);

    expect(await internal.deleteBucketSources(org.orgId, "media")).toBe(2);
    expect((await org.listSources({ bucket: "media" })).sources).toEqual([]);
  });

  it("pages over gRPC and returns every source over HTTP", async () => {
    const org = await caller();
    await internal.ensureInternalSource(org.orgId, "many");
    for (let index = 0; index < 5; index++) {
      await org.createSource({
        bucket: "many",
        name: `web-${index}`,
        provider: Provider.WEB,
        config: { urls: [`https://example.com/${index}`] },
      });
    }
    const names: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await org.listSources({ bucket: "many", pageSize: 2, pageToken });
      expect(page.sources.length).toBeLessThanOrEqual(2);
      names.push(...page.sources.map((s) => s.name));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== "");
    expect(pages).toBe(3);
    // Every source exactly once, the internal one first; sources made in one millisecond follow their ids.
    expect(names[0]).toBe("internal");
    expect([...names].sort()).toEqual(["internal", "web-0", "web-1", "web-2", "web-3", "web-4"]);

    const http = await org.listSources({ bucket: "many", pageSize: 2 }, "http");
    expect(http.sources.map((s) => s.name)).toEqual(names);
    expect(http.nextPageToken).toBe("");
    expect((await connectErrorOf(() => org.listSources({ bucket: "many", pageToken: "x" }))).rawMessage).toMatch(
      /^page_token/,
    );
  });

  it("answers NOT_FOUND for another organization's sources and credentials", async () => {
    const owner = await caller();
    const other = await caller();
    const source = await s3Source(owner);
    const [credential] = (await owner.listCredentials()).credentials;

    expect((await connectErrorOf(() => other.getSource("docs", source.sourceId))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(() => other.deleteSource("docs", source.sourceId))).code).toBe(Code.NotFound);
    expect(
      (await connectErrorOf(() => other.updateSource({ bucket: "docs", sourceId: source.sourceId, name: "x" }))).code,
    ).toBe(Code.NotFound);
    expect((await other.listSources({ bucket: "docs" })).sources).toEqual([]);
    expect((await other.listCredentials()).credentials).toEqual([]);
    expect((await connectErrorOf(() => other.deleteCredential(credential!.credentialId))).code).toBe(Code.NotFound);
    // Naming another organization's credential or source is NOT_FOUND too, never a way in.
    const borrowing = await connectErrorOf(() =>
      other.createSource({
        bucket: "docs",
        name: "borrowed",
        provider: Provider.AMAZON_S3,
        credentialId: credential!.credentialId,
        config: { bucket: "b" },
      }),
    );
    expect(borrowing.code).toBe(Code.NotFound);
    expect(borrowing.rawMessage).toMatch(/^credential_id/);
    const storing = await connectErrorOf(() =>
      other.storeCredential({
        name: "x",
        provider: Provider.AMAZON_S3,
        sourceId: source.sourceId,
        secret: accessKey(),
      }),
    );
    expect(storing.code).toBe(Code.NotFound);
    // A source in another bucket of the same organization is not found either.
    expect((await connectErrorOf(() => owner.getSource("other", source.sourceId))).code).toBe(Code.NotFound);
    expect((await owner.getSource("docs", source.sourceId)).name).toBe("archive");
  });

  it("refuses a taken name and an unknown bucket", async () => {
    const org = await caller();
    await s3Source(org, "dup");
    const taken = await connectErrorOf(() => s3Source(org, "dup"));
    expect(taken.code).toBe(Code.AlreadyExists);
    expect(taken.rawMessage).toMatch(/^name: /);
    missingBuckets.add("nowhere");
    expect((await connectErrorOf(() => s3Source(org, "x", "nowhere"))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(() => org.listSources({ bucket: "nowhere" }))).code).toBe(Code.NotFound);
  });

  it("rejects bad input with the field named", async () => {
    const org = await caller();
    const s3 = await org.storeCredential({ name: "s3", provider: Provider.AMAZON_S3, secret: accessKey() });
    const token = await org.storeCredential({
      name: "t",
      provider: Provider.AMAZON_S3,
      secret: { case: "token", value: "t" },
    });
    const base = { bucket: "docs", name: "n", provider: Provider.AMAZON_S3, credentialId: s3.credentialId };
    const cases: [CreateInit, RegExp, Code?][] = [
      [{ ...base, bucket: "" }, /^bucket is required/],
      [{ ...base, bucket: "a/b" }, /^bucket must not contain/],
      [{ ...base, name: "  " }, /^name is required/],
      [{ ...base, name: "x".repeat(201) }, /^name is longer than 200/],
      [{ ...base, name: "tab\there" }, /^name must not contain control characters/],
      [{ ...base, provider: Provider.UNSPECIFIED }, /^provider is required/],
      [{ ...base, provider: 99 as Provider }, /^provider: provider 99 is not a known provider/],
      [
        { ...base, provider: Provider.DROPBOX },
        /^provider: PROVIDER_DROPBOX sources are not supported/,
        Code.Unimplemented,
      ],
      [{ ...base, config: {} }, /^config.bucket is required/],
      [{ ...base, config: { bucket: "b", prefx: "a/" } }, /^config.prefx is not a setting of PROVIDER_AMAZON_S3/],
      [{ ...base, config: { bucket: 3 } }, /^config.bucket must be a string/],
      [{ ...base, config: { bucket: "b", endpoint: "ftp://x" } }, /^config.endpoint must start with http/],
      [{ ...base, config: { bucket: "b", endpoint: "https://u:p@x" } }, /^config.endpoint must not hold a user name/],
      [{ ...base, config: { bucket: "b", region: "EU WEST" } }, /^config.region must be/],
      [{ ...base, config: { bucket: "b", force_path_style: "yes" } }, /^config.force_path_style must be true or false/],
      [{ ...base, credentialId: "", config: { bucket: "b" } }, /^credential_id is required for PROVIDER_AMAZON_S3/],
      [{ ...base, credentialId: "nope", config: { bucket: "b" } }, /^credential_id must be a UUID/],
      [
        { ...base, credentialId: token.credentialId, config: { bucket: "b" } },
        /^credential_id: PROVIDER_AMAZON_S3 connects with credentials of type access_key, not token/,
      ],
      [{ ...base, provider: Provider.WEB, credentialId: "", config: {} }, /^config.urls is required/],
      [
        { ...base, provider: Provider.WEB, credentialId: "", config: { urls: ["https://a", 1] } },
        /^config.urls\[1\] must be a string/,
      ],
      [
        { ...base, provider: Provider.WEB, credentialId: "", config: { urls: ["file:///etc/passwd"] } },
        /^config.urls\[0\] must start with http/,
      ],
      [
        { ...base, provider: Provider.WEB, credentialId: "", config: { urls: ["https://a/", "https://a/"] } },
        /^config.urls\[1\] repeats/,
      ],
    ];
    for (const [request, message, code] of cases) {
      const error = await connectErrorOf(() => org.createSource(request));
      expect(error.code, error.rawMessage).toBe(code ?? Code.InvalidArgument);
      expect(error.rawMessage).toMatch(message);
    }
    expect((await org.listSources({ bucket: "docs" })).sources).toEqual([]);
    expect((await connectErrorOf(() => org.getSource("docs", "not-a-uuid"))).rawMessage).toBe(
      "source_id must be a UUID",
    );
    expect((await connectErrorOf(() => org.getSource("docs", ""))).rawMessage).toBe("source_id is required");
  });
});
