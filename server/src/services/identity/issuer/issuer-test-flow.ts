import { createHash, randomBytes } from "node:crypto";
import {
  TEST_PASSWORD,
  TEST_REDIRECT_URI,
  type IssuerAnswer,
  type IssuerTestPlane,
  type TestIssuerPool,
} from "./issuer-test-plane.js";

/** A PKCE pair (RFC 7636, S256). */
export function pkcePair(): { readonly verifier: string; readonly challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** GET /authorize with sensible parameters, any of them replaced. */
export function authorizeUrl(pool: TestIssuerPool, params: Record<string, string>): string {
  const url = new URL(`${pool.issuer}/authorize`);
  const all = {
    response_type: "code",
    client_id: "web",
    redirect_uri: TEST_REDIRECT_URI,
    state: "st-1",
    code_challenge_method: "S256",
    scope: "openid",
    ...params,
  };
  for (const [name, value] of Object.entries(all)) url.searchParams.set(name, value);
  return url.toString();
}

/** Starts a login transaction and answers its handle. */
export async function beginLogin(
  plane: IssuerTestPlane,
  pool: TestIssuerPool,
  params: Record<string, string>,
): Promise<string> {
  const started = await plane.request("GET", authorizeUrl(pool, params));
  const location = started.headers.get("location") ?? "";
  const handle = new URL(location).searchParams.get("transaction");
  if (started.status !== 302 || !handle) throw new Error(`authorize answered ${started.status} ${location}`);
  return handle;
}

export function submitLogin(
  plane: IssuerTestPlane,
  pool: TestIssuerPool,
  transaction: string,
  email: string,
  password = TEST_PASSWORD,
): Promise<IssuerAnswer> {
  return plane.request("POST", `${pool.issuer}/login`, { form: { transaction, email, password } });
}

/** The whole browser half: answers the code and the verifier that redeems it. */
export async function codeFor(
  plane: IssuerTestPlane,
  pool: TestIssuerPool,
  email: string,
  params: Record<string, string> = {},
): Promise<{ readonly code: string; readonly verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const handle = await beginLogin(plane, pool, { code_challenge: challenge, ...params });
  const login = await submitLogin(plane, pool, handle, email);
  const code = new URL(login.headers.get("location") ?? "http://x/").searchParams.get("code");
  if (login.status !== 303 || !code) throw new Error(`login answered ${login.status}: ${login.text.slice(0, 200)}`);
  return { code, verifier };
}

export function redeem(
  plane: IssuerTestPlane,
  pool: TestIssuerPool,
  grant: { readonly code: string; readonly verifier: string },
  clientId = "web",
): Promise<IssuerAnswer> {
  return plane.request("POST", `${pool.issuer}/token`, {
    form: {
      grant_type: "authorization_code",
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: TEST_REDIRECT_URI,
      client_id: clientId,
    },
  });
}
