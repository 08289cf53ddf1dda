import type { MediaTypeObject, ParameterObject, ReferenceObject, ResponseObject } from "openapi3-ts/oas31";
import { describe, expect, it } from "vitest";
import {
  loadOpenApiSource,
  operationsOf,
  resolveRef,
  schemaCompilerFor,
  type OpenApiSource,
} from "./openapi-source.js";

// The identity documents must say what the specification says: its routes with their exact
// paths, who may call them, and its limits as schema constraints that validation enforces.
const issuer = await loadOpenApiSource("identity-issuer.yaml");
const admin = await loadOpenApiSource("identity-admin.yaml");

const routesOf = (source: OpenApiSource) =>
  operationsOf(source.doc)
    .map(({ method, path, op }) => `${method.toUpperCase()} ${path} ${op.operationId}`)
    .sort();
const operation = (source: OpenApiSource, id: string) => operationsOf(source.doc).find((o) => o.op.operationId === id)!;
const response = (source: OpenApiSource, id: string, status: string) =>
  resolveRef<ResponseObject>(
    source.doc,
    operation(source, id).op.responses![status] as ResponseObject | ReferenceObject,
  );
const jsonSchemaOf = (r: ResponseObject) => (r.content!["application/json"] as MediaTypeObject).schema;
const parameter = (source: OpenApiSource, id: string, name: string) =>
  (operation(source, id).op.parameters ?? [])
    .map((p) => resolveRef<ParameterObject>(source.doc, p as ParameterObject | ReferenceObject))
    .find((p) => p.name === name)!;

describe("the issuer document", () => {
  it("has the specification's issuer routes under {identity_url}/{org}/{pool}", () => {
    expect(issuer.doc.servers?.[0]?.url).toBe("{identity_url}/{org}/{pool}");
    expect(routesOf(issuer)).toEqual([
      "GET /.well-known/jwks.json getJwks",
      "GET /.well-known/openid-configuration getOpenidConfiguration",
      "GET /authorize authorize",
      "GET /branding getBranding",
      "GET /login showLoginPage",
      "GET /reset showResetPage",
      "GET /user getCurrentUser",
      "GET /userinfo getUserInfo",
      "GET /verify showVerifyPage",
      "POST /login submitLogin",
      "POST /logout logout",
      "POST /recover recoverPassword",
      "POST /reset resetPassword",
      "POST /signup signup",
      "POST /token token",
      "POST /userinfo postUserInfo",
      "POST /verify verifyEmail",
    ]);
  });

  it("is anonymous except GET /user and the OpenID Connect UserInfo endpoint, and rate limits the credential endpoints", () => {
    const bearer = new Set(["getCurrentUser", "getUserInfo", "postUserInfo"]);
    for (const { op } of operationsOf(issuer.doc))
      expect(op["x-platform-auth"], op.operationId).toBe(bearer.has(op.operationId ?? "") ? "pool-bearer" : "none");
    const limited = operationsOf(issuer.doc)
      .filter((o) => o.op["x-platform-rate-limit"] === "credential")
      .map((o) => o.op.operationId)
      .sort();
    expect(limited).toEqual(["recoverPassword", "resetPassword", "signup", "submitLogin", "token", "verifyEmail"]);
  });

  it("makes PKCE S256 mandatory with a 43 to 128 character challenge", () => {
    const compile = schemaCompilerFor(issuer.doc);
    const challenge = parameter(issuer, "authorize", "code_challenge");
    const method = parameter(issuer, "authorize", "code_challenge_method");
    expect(challenge.required && method.required).toBe(true);
    const validChallenge = compile(challenge.schema!);
    expect(["a".repeat(43), "A-._~".repeat(25) + "abc"].map((v) => validChallenge(v))).toEqual([true, true]);
    expect(["a".repeat(42), "a".repeat(129), "a".repeat(42) + "+"].map((v) => validChallenge(v))).toEqual([
      false,
      false,
      false,
    ]);
    expect(compile(method.schema!)("plain")).toBe(false);
  });

  it("takes the three grants as JSON and as a form, and answers RFC 6749 errors", () => {
    const body = operation(issuer, "token").op.requestBody as { content: Record<string, MediaTypeObject> };
    expect(Object.keys(body.content).sort()).toEqual(["application/json", "application/x-www-form-urlencoded"]);
    const validRequest = schemaCompilerFor(issuer.doc)(body.content["application/json"]!.schema!);
    expect(validRequest({ grant_type: "password", email: "a@example.com", password: "pw", tenant: "acme" })).toBe(true);
    expect(validRequest({ grant_type: "refresh_token", refresh_token: "r" })).toBe(true);
    expect(
      validRequest({
        grant_type: "authorization_code",
        code: "c",
        redirect_uri: "https://app.example/cb",
        client_id: "web",
        code_verifier: "v".repeat(43),
      }),
    ).toBe(true);
    expect(
      validRequest({
        grant_type: "authorization_code",
        code: "c",
        redirect_uri: "https://app.example/cb",
        client_id: "web",
      }),
    ).toBe(false);
    expect(validRequest({ grant_type: "client_credentials" })).toBe(false);
    for (const status of ["400", "401", "403", "404", "429", "503"]) {
      expect(jsonSchemaOf(response(issuer, "token", status))).toEqual({ $ref: "#/components/schemas/OAuthError" });
    }
    expect(jsonSchemaOf(response(issuer, "signup", "400"))).toEqual({ $ref: "#/components/schemas/IssuerError" });
  });

  it("serves the JWKS with max-age=300 and the hosted pages as HTML", () => {
    const cacheControl = resolveRef(issuer.doc, response(issuer, "getJwks", "200").headers!["Cache-Control"]!) as {
      schema: { const: string };
    };
    expect(cacheControl.schema.const).toBe("max-age=300");
    for (const id of ["showLoginPage", "showResetPage", "showVerifyPage"])
      expect(Object.keys(response(issuer, id, "200").content!)).toEqual(["text/html"]);
    expect(Object.keys((operation(issuer, "submitLogin").op.requestBody as { content: object }).content)).toEqual([
      "application/x-www-form-urlencoded",
    ]);
  });
});

describe("the admin document", () => {
  it("has the specification's admin routes under {api_url}/v1/identity", () => {
    expect(admin.doc.servers?.[0]?.url).toBe("{api_url}/v1/identity");
    expect(routesOf(admin)).toEqual([
      "DELETE /pools/{pool} deletePool",
      "DELETE /pools/{pool}/connections/{kind} deleteConnection",
      "DELETE /pools/{pool}/tenants/{tenant} deleteTenant",
      "DELETE /pools/{pool}/tenants/{tenant}/members/{userId} removeTenantMember",
      "DELETE /pools/{pool}/users/{userId} deleteUser",
      "GET /healthz checkIdentityHealth",
      "GET /pools listPools",
      "GET /pools/{pool} getPool",
      "GET /pools/{pool}/connections listConnections",
      "GET /pools/{pool}/tenants listTenants",
      "GET /pools/{pool}/tenants/{tenant}/members listTenantMembers",
      "GET /pools/{pool}/users listUsers",
      "GET /pools/{pool}/users/{userId} getUser",
      "GET /pools/{pool}/users/{userId}/tenants listUserTenants",
      "PATCH /pools/{pool} updatePool",
      "PATCH /pools/{pool}/tenants/{tenant} updateTenant",
      "PATCH /pools/{pool}/users/{userId} updateUser",
      "POST /pools createPool",
      "POST /pools/{pool}/connections upsertConnection",
      "POST /pools/{pool}/rotate-keys rotatePoolKeys",
      "POST /pools/{pool}/tenants createTenant",
      "POST /pools/{pool}/tenants/{tenant}/members setTenantMember",
      "POST /pools/{pool}/user-store setUserStore",
      "POST /pools/{pool}/user-store/migrate startUserStoreMigration",
      "POST /pools/{pool}/user-store/migrate/abort abortUserStoreMigration",
      "POST /pools/{pool}/users createUser",
      "POST /pools/{pool}/users/{userId}/ban setUserBanned",
      "POST /pools/{pool}/users/{userId}/password setUserPassword",
      "POST /pools/{pool}/users/{userId}/roles replaceUserRoles",
      "POST /pools/{pool}/users/{userId}/sessions/revoke revokeUserSessions",
    ]);
  });

  it("needs the platform bearer everywhere but /healthz, and answers 503 with Retry-After to mutations", () => {
    // A pool being created has no migration, and an abort must get through the locked phase.
    const neverLocked = ["createPool", "abortUserStoreMigration"];
    for (const { method, op } of operationsOf(admin.doc)) {
      expect(op["x-platform-auth"], op.operationId).toBe(
        op.operationId === "checkIdentityHealth" ? "none" : "platform-bearer",
      );
      if (method !== "get" && !neverLocked.includes(op.operationId!)) {
        expect(Object.keys(response(admin, op.operationId!, "503").headers ?? {}), op.operationId).toContain(
          "Retry-After",
        );
      }
    }
    expect(jsonSchemaOf(response(admin, "createPool", "409"))).toEqual({ $ref: "#/components/schemas/Error" });
  });

  it("pages users by keyset with at most 500 a page", () => {
    const compile = schemaCompilerFor(admin.doc);
    const limit = compile(parameter(admin, "listUsers", "limit").schema!);
    expect([1, 500].map((n) => limit(n))).toEqual([true, true]);
    expect([0, 501].map((n) => limit(n))).toEqual([false, false]);
    expect(["emailFilter", "cursor", "includeDeleted"].every((name) => parameter(admin, "listUsers", name))).toBe(true);
    const page = compile(jsonSchemaOf(response(admin, "listUsers", "200"))!);
    expect(page({ users: [], nextCursor: "c" })).toBe(true);
  });

  it("holds the tenant slug to 1 to 63 characters of [a-z0-9-] and refuses unknown members", () => {
    const createTenant = schemaCompilerFor(admin.doc)({ $ref: "#/components/schemas/CreateTenantRequest" });
    expect(createTenant({ slug: "acme-1", metadataJson: "{}" })).toBe(true);
    expect(["", "Acme", "a".repeat(64), "a_b"].map((slug) => createTenant({ slug }))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(createTenant({ slug: "acme", display_name: "Acme" })).toBe(false);
  });

  it("shows the pool's state and migration phases as the specification names them", () => {
    const schemas = admin.doc.components!.schemas! as Record<string, { enum?: string[] }>;
    expect(schemas.PoolState!.enum).toEqual(["active", "migrating", "migration_failed"]);
    expect(schemas.MigrationPhase!.enum).toEqual([
      "warm_copy",
      "locked_delta",
      "verifying",
      "cutover",
      "purging",
      "done",
      "failed",
    ]);
  });
});
