import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialType, Provider } from "../../../../gen/platform/data/source/v1/source_pb.js";
import { ListCredentialsRequestSchema } from "../../../../gen/platform/data/source/v1/source_service_pb.js";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { createSourceService } from "./source-handlers.js";
import {
  accessKey,
  Code,
  connectErrorOf,
  s3Source,
  sourceCaller,
  sourceContextOf,
  type StoreInit,
} from "./source-test-context.js";

let database: TestDatabase;
let service: SourceServiceImplementation;
beforeAll(async () => {
  database = await openTestDatabase();
  service = createSourceService({
    db: database.db,
    box: createSecretBox(new Uint8Array(randomBytes(32))),
    allowPrivateNetwork: false,
  });
});
afterAll(() => database.close());

const caller = async () => sourceCaller(service, await database.createOrganization());

describe(`credentials (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("stores secrets sealed and answers metadata only", async () => {
    const org = await caller();
    const secret = `sk_${randomBytes(12).toString("hex")}`;
    const stored = await org.storeCredential({ name: "keys", provider: Provider.AMAZON_S3, secret: accessKey(secret) });
    expect(stored).toMatchObject({
      name: "keys",
      provider: Provider.AMAZON_S3,
      type: CredentialType.ACCESS_KEY,
      expiresAt: 0n,
    });
    const apiKey = await org.storeCredential({
      name: "notion",
      provider: Provider.NOTION,
      secret: { case: "apiKey", value: secret },
    });
    expect(apiKey.type).toBe(CredentialType.API_KEY);
    const listed = await org.listCredentials();
    expect(listed.credentials.map((c) => c.name)).toEqual(["keys", "notion"]);
    const text = JSON.stringify(listed, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    expect(text).not.toContain(secret);
    expect(text).not.toContain("AKIAEXAMPLE");

    const rows = await database.db.execute(
      sql`select encode(sealed_secret, 'escape') as escaped from source_credentials where org_id = ${org.orgId}`,
    );
    const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as { escaped: string }[];
    expect(list).toHaveLength(2);
    for (const row of list) expect(row.escaped).not.toContain(secret);
  });

  it("filters by provider and source, and deletes, clearing the source's reference", async () => {
    const org = await caller();
    const source = await s3Source(org);
    const forSource = await org.storeCredential({
      name: "bound",
      provider: Provider.AMAZON_S3,
      sourceId: source.sourceId,
      secret: accessKey(),
    });
    await org.storeCredential({ name: "gh", provider: Provider.GITHUB, secret: { case: "token", value: "ghp" } });
    expect((await org.listCredentials({ provider: Provider.GITHUB })).credentials.map((c) => c.name)).toEqual(["gh"]);
    expect((await org.listCredentials({ sourceId: source.sourceId })).credentials.map((c) => c.name)).toEqual([
      "bound",
    ]);
    expect((await org.listCredentials({ provider: Provider.AMAZON_S3 })).credentials).toHaveLength(2);

    await org.deleteCredential(source.credentialId);
    expect((await org.getSource("docs", source.sourceId)).credentialId).toBe("");
    await org.deleteSource("docs", source.sourceId);
    const [unbound] = (await org.listCredentials({ provider: Provider.AMAZON_S3 })).credentials;
    expect(unbound).toMatchObject({ credentialId: forSource.credentialId, sourceId: "" });
  });

  it("rejects bad input with the field named and the value not repeated", async () => {
    const org = await caller();
    const cases: [StoreInit, RegExp][] = [
      [{ name: "", provider: Provider.GITHUB, secret: { case: "token", value: "secret-tok" } }, /^name is required/],
      [{ name: "n", secret: { case: "token", value: "secret-tok" } }, /^provider is required/],
      [
        { name: "n", provider: Provider.WEB, secret: { case: "token", value: "secret-tok" } },
        /^provider: PROVIDER_WEB takes no credential/,
      ],
      [{ name: "n", provider: Provider.GITHUB }, /^secret is required/],
      [{ name: "n", provider: Provider.GITHUB, secret: { case: "token", value: " " } }, /^token is required/],
      [{ name: "n", provider: Provider.GITHUB, secret: { case: "apiKey", value: "" } }, /^api_key is required/],
      [
        {
          name: "n",
          provider: Provider.AMAZON_S3,
          secret: { case: "accessKey", value: { secretAccessKey: "secret-tok" } },
        },
        /^access_key.access_key_id is required/,
      ],
      [
        { name: "n", provider: Provider.AMAZON_S3, secret: { case: "accessKey", value: { accessKeyId: "a" } } },
        /^access_key.secret_access_key is required/,
      ],
      [
        { name: "n", provider: Provider.GITHUB, sourceId: "x", secret: { case: "token", value: "secret-tok" } },
        /^source_id must be a UUID/,
      ],
    ];
    for (const [request, message] of cases) {
      const error = await connectErrorOf(() => org.storeCredential(request));
      expect(error.code, error.rawMessage).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(message);
      expect(error.rawMessage).not.toContain("secret-tok");
    }
    const source = await s3Source(org);
    const mismatch = await connectErrorOf(() =>
      org.storeCredential({
        name: "n",
        provider: Provider.GITHUB,
        sourceId: source.sourceId,
        secret: { case: "token", value: "t" },
      }),
    );
    expect(mismatch.rawMessage).toMatch(/^source_id: the source reads PROVIDER_AMAZON_S3, not PROVIDER_GITHUB/);
    expect((await connectErrorOf(() => org.listCredentials({ sourceId: "x" }))).rawMessage).toBe(
      "source_id must be a UUID",
    );
    expect((await connectErrorOf(() => org.deleteCredential(""))).rawMessage).toBe("credential_id is required");
  });

  it("needs an authenticated caller", async () => {
    const error = await connectErrorOf(async () =>
      service.listCredentials(create(ListCredentialsRequestSchema), sourceContextOf(undefined)),
    );
    expect(error.code).toBe(Code.Unauthenticated);
  });
});
