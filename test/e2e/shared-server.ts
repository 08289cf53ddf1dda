import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, s3ClientFor } from "./platform-server.js";

/** The server every end-to-end file shares (started once by global-setup.ts). */
export const apiUrl = (): string => inject("platformUrls").api!;
/** Its data listener: the data platform's services (pipelines, sources, ingest, vector). */
export const dataUrl = (): string => inject("platformUrls").data!;
/** Where that server serves the S3-compatible API. */
export const s3Url = (): string => inject("platformUrls").s3!;
/** Where that server serves every pool's issuer. */
export const identityUrl = (): string => inject("platformUrls").identity!;

export interface TestOrganization {
  readonly id: string;
  readonly name: string;
  /** The owner key `admin create-org` printed. */
  readonly token: string;
  /** Headers a plain HTTP client sends as this organization's owner. */
  readonly headers: Record<string, string>;
  /** The SDK, as this organization's owner. */
  readonly client: PlatformClient;
}

/**
 * A new organization with an owner key, made the way an operator does: `platform-server admin
 * create-org` on the running server's data directory (which goes through the server's IAM API).
 */
export async function createOrganization(prefix = "org"): Promise<TestOrganization> {
  const name = `${prefix}-${randomBytes(4).toString("hex")}`;
  const result = await runAdmin(inject("platformDataDir"), ["create-org", name]);
  if (result.code !== 0) throw new Error(`admin create-org failed (${result.code}): ${result.stderr}`);
  const { organization, apiKey } = result.json as { organization: { id: string; name: string }; apiKey: string };
  return {
    id: organization.id,
    name: organization.name,
    token: apiKey,
    headers: { authorization: `Bearer ${apiKey}`, "x-organization-name": organization.name },
    client: createPlatformClient({
      apiUrl: apiUrl(),
      identityUrl: identityUrl(),
      token: apiKey,
      organization: organization.name,
    }),
  };
}

/** What the identity admin plane answered to a plain HTTP call: its error body or its resource. */
export interface IdentityAdminAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { code?: string; message?: string; migration?: { phase: string } } & Record<string, unknown>;
}

/** A plain HTTP call to `{api_url}/v1/identity`, for the answers the SDK would turn into errors. */
export async function callIdentityAdmin(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<IdentityAdminAnswer> {
  const response = await fetch(`${apiUrl()}/v1/identity${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as IdentityAdminAnswer["body"]) : {},
  };
}

/**
 * A transport of each RPC protocol the api listener speaks (Connect JSON and binary, gRPC over h2c,
 * gRPC-web), each sending the credentials of the organization `org()` returns when the call is made.
 */
export function rpcTransports(org: () => TestOrganization): [string, () => Transport][] {
  const credentials: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${org().token}`);
    req.header.set("x-organization-name", org().name);
    return next(req);
  };
  const interceptors = [credentials];
  return [
    ["Connect JSON (HTTP/1.1)", () => createConnectTransport({ baseUrl: apiUrl(), httpVersion: "1.1", interceptors })],
    [
      "Connect binary (HTTP/2)",
      () => createConnectTransport({ baseUrl: apiUrl(), httpVersion: "2", useBinaryFormat: true, interceptors }),
    ],
    ["gRPC (h2c)", () => createGrpcTransport({ baseUrl: apiUrl(), interceptors })],
    ["gRPC-web (HTTP/1.1)", () => createGrpcWebTransport({ baseUrl: apiUrl(), httpVersion: "1.1", interceptors })],
  ];
}

/** An S3 client of the shared server, as a new `data.editor` key of the organization. */
export function s3ClientOf(org: TestOrganization): Promise<S3Client> {
  return s3ClientFor(s3Url(), org.client, org.id);
}

/** Creates the organization's buckets the way its users do: with the AWS SDK on the S3 listener. */
export async function createBuckets(org: TestOrganization, ...names: string[]): Promise<void> {
  const s3 = await s3ClientOf(org);
  try {
    for (const name of names) await s3.send(new CreateBucketCommand({ Bucket: name }));
  } finally {
    s3.destroy();
  }
}

/** What the data listener answered to a plain HTTP call: the status and the JSON body. */
export interface DataAnswer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

/** A plain HTTP call to the data listener as the organization's owner. */
export async function callData<T = Record<string, unknown>>(
  org: TestOrganization,
  method: string,
  path: string,
  body?: unknown,
): Promise<DataAnswer<T>> {
  const response = await fetch(`${dataUrl()}${path}`, {
    method,
    headers: { ...org.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
}

/** The body of a call that must answer 200; anything else fails the test with the answer. */
export async function okData<T = Record<string, unknown>>(answer: Promise<DataAnswer<T>>): Promise<T> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`expected 200, got ${status}: ${JSON.stringify(body)}`);
  return body;
}
