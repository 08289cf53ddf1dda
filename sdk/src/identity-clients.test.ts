import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdentityAdminHandler } from "../../gen/openapi/identity-admin/handler.js";
import { createIdentityIssuerHandler } from "../../gen/openapi/identity-issuer/handler.js";
import { createIssuerClient, createPlatformClient, RestCallError } from "./index.js";

// The SDK's identity clients against servers built from the generated handlers: each plane at its
// base path, the platform credential only to the admin plane, a pool token only where the issuer
// asks for one.
const seen: { path: string; authorization: string | null }[] = [];
let api: http.Server;
let identity: http.Server;
let apiUrl: string;
let identityUrl: string;

const jwk = { kty: "OKP", crv: "Ed25519", x: "A".repeat(43), kid: "k1", use: "sig", alg: "EdDSA" } as const;

async function listen(server: http.Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function recording(handler: http.RequestListener): http.RequestListener {
  return (request, response) => {
    seen.push({ path: request.url ?? "", authorization: request.headers.authorization ?? null });
    handler(request, response);
  };
}

beforeAll(async () => {
  const admin = createIdentityAdminHandler({
    async rotatePoolKeys(input) {
      if (input.path.pool === "missing")
        return { status: 404, body: { code: "not_found", message: "pool missing not found" } };
      return { status: 200, body: { key: jwk } };
    },
  });
  const issuer = createIdentityIssuerHandler({
    async getJwks(_input, context) {
      return {
        status: 200,
        body: { keys: [{ ...jwk, kid: `${context.serverVariables.org}/${context.serverVariables.pool}` }] },
        headers: { "cache-control": "max-age=300" },
      };
    },
  });
  api = http.createServer(recording(admin.nodeHandler()));
  identity = http.createServer(recording(issuer.nodeHandler()));
  apiUrl = await listen(api);
  identityUrl = await listen(identity);
});
afterAll(() => {
  api.close();
  identity.close();
});

describe("identity clients", () => {
  const client = () => createPlatformClient({ apiUrl, identityUrl, token: "dk_test" });

  it("calls the admin plane under /v1/identity with the platform credential", async () => {
    seen.length = 0;
    expect(await client().identityAdmin.rotatePoolKeys({ path: { pool: "staff" } })).toEqual({ key: jwk });
    expect(seen).toEqual([{ path: "/v1/identity/pools/staff/rotate-keys", authorization: "Bearer dk_test" }]);
  });

  it("throws an admin error as a RestCallError with the Connect code", async () => {
    const error = await client()
      .identityAdmin.rotatePoolKeys({ path: { pool: "missing" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestCallError);
    expect(error).toMatchObject({ code: Code.NotFound, status: 404, rawMessage: "pool missing not found" });
  });

  it("calls a pool's issuer under /{org}/{pool} without the platform credential", async () => {
    seen.length = 0;
    const answered: [number, string | null][] = [];
    const jwks = await client()
      .identityIssuer({ org: "acme", pool: "staff", token: "pool-token" })
      .getJwks({}, { onHeader: (headers, status) => answered.push([status, headers.get("cache-control")]) });
    expect(jwks).toEqual({ keys: [{ ...jwk, kid: "acme/staff" }] });
    expect(answered).toEqual([[200, "max-age=300"]]);
    expect(seen).toEqual([{ path: "/acme/staff/.well-known/jwks.json", authorization: null }]);
  });

  it("makes an issuer client without a platform client", async () => {
    const issuer = createIssuerClient({ identityUrl, org: "acme", pool: "guests" });
    expect((await issuer.getJwks()).keys[0]!.kid).toBe("acme/guests");
    await expect(issuer.getBranding()).rejects.toMatchObject({ code: Code.Unimplemented, status: 501 });
  });
});
