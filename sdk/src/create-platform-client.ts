import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  createRestClient,
  type RestBodyClient,
  type RestClientOptions,
  type ServiceClientOptions,
} from "@platform/codegen/runtime/client";
import {
  createBuildServiceClient,
  type BuildServiceClient,
} from "../../gen/platform/compute/v1/build_service_client.js";
import {
  createComputeServiceClient,
  type ComputeServiceClient,
} from "../../gen/platform/compute/v1/compute_service_client.js";
import {
  createSecretServiceClient,
  type SecretServiceClient,
} from "../../gen/platform/compute/v1/secret_service_client.js";
import {
  createActionsServiceClient,
  type ActionsServiceClient,
} from "../../gen/platform/data/actions/v1/actions_service_client.js";
import {
  createIngestServiceClient,
  type IngestServiceClient,
} from "../../gen/platform/data/ingest/v1/ingest_service_client.js";
import {
  createPipelineServiceClient,
  type PipelineServiceClient,
} from "../../gen/platform/data/pipeline/v1/pipeline_service_client.js";
import {
  createSourceServiceClient,
  type SourceServiceClient,
} from "../../gen/platform/data/source/v1/source_service_client.js";
import {
  createVectorDataServiceClient,
  type VectorDataServiceClient,
} from "../../gen/platform/data/vector/v1/vector_data_service_client.js";
import {
  createVectorServiceClient,
  type VectorServiceClient,
} from "../../gen/platform/data/vector/v1/vector_service_client.js";
import { createIamServiceClient, type IamServiceClient } from "../../gen/platform/iam/v1/iam_service_client.js";
import {
  createScriptServiceClient,
  type ScriptServiceClient,
} from "../../gen/platform/script/v1/script_service_client.js";
import {
  createVectorDbServiceClient,
  type VectorDbServiceClient,
} from "../../gen/platform/vectordb/v1/vectordb_service_client.js";
import type { IdentityAdminClient as IdentityAdminResultClient } from "../../gen/openapi/identity-admin/client.js";
import { IdentityAdminRoutes } from "../../gen/openapi/identity-admin/routes.js";
import { createIssuerClient, type IdentityIssuerClient } from "./create-issuer-client.js";

/**
 * The identity admin API. Each method resolves to the body of its success (`createPool` to the
 * pool, `listUsers` to `{users, nextCursor}`) and throws RestCallError for any other answer, as
 * the RPC clients resolve to their response message and throw ConnectError.
 */
export type IdentityAdminClient = RestBodyClient<IdentityAdminResultClient>;

export interface PlatformClientOptions {
  /** Base URL of the API plane (script, compute, secrets, builds, vector databases, IAM). */
  readonly apiUrl: string;
  /** Base URL of the data plane (actions, pipelines, sources, ingest, vector engine, search and vector tables); defaults to apiUrl. */
  readonly dataUrl?: string;
  /** Base URL of the identity plane, where pool issuers are served (`{identity_url}`); defaults to apiUrl. */
  readonly identityUrl?: string;
  /** An API key (`dk_...`) or access token, sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** The caller's organization, sent as `x-organization-name` where the contract asks for it. */
  readonly organization?: string;
  /** `connect` (default; JSON over HTTP/1.1 or HTTP/2) or `grpc-web`. Both work in browsers and Node. */
  readonly protocol?: "connect" | "grpc-web";
  /** Use the binary protobuf encoding instead of JSON. */
  readonly binary?: boolean;
  /** A custom fetch, for proxies, mTLS or tests. */
  readonly fetch?: typeof globalThis.fetch;
  /** Extra interceptors, run after the credentials are set (logging, tracing); RPC planes only. */
  readonly interceptors?: Interceptor[];
  /** Retries of idempotent calls; `false` turns them off. */
  readonly retry?: ServiceClientOptions["retry"];
}

/** One typed client per service of the platform. */
export interface PlatformClient {
  readonly script: ScriptServiceClient;
  readonly actions: ActionsServiceClient;
  readonly compute: ComputeServiceClient;
  readonly secrets: SecretServiceClient;
  readonly builds: BuildServiceClient;
  readonly pipelines: PipelineServiceClient;
  readonly sources: SourceServiceClient;
  readonly ingest: IngestServiceClient;
  readonly vector: VectorServiceClient;
  /** Vector tables of caller-supplied embeddings (upsert, query, delete) on the data plane. */
  readonly vectorData: VectorDataServiceClient;
  readonly vectorDb: VectorDbServiceClient;
  readonly iam: IamServiceClient;
  /** The identity admin API, `{apiUrl}/v1/identity`, with the platform credential. */
  readonly identityAdmin: IdentityAdminClient;
  /**
   * The issuer of one identity pool, `{identityUrl}/{org}/{pool}`. Its `token` is a pool access
   * token (for `getCurrentUser`): the platform credential is never sent to an issuer.
   */
  identityIssuer(pool: {
    readonly org: string;
    readonly pool: string;
    readonly token?: RestClientOptions["token"];
  }): IdentityIssuerClient;
}

/**
 * The SDK's one factory: every service client over one transport per plane, with the credentials
 * added to each call and retries on the methods the contract marks idempotent.
 */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const api = createTransport(options.apiUrl, options);
  const data = options.dataUrl === undefined ? api : createTransport(options.dataUrl, options);
  const clientOptions: ServiceClientOptions = options.retry === undefined ? {} : { retry: options.retry };
  const rest = { ...clientOptions, ...(options.fetch ? { fetch: options.fetch } : {}) };
  return {
    script: createScriptServiceClient(api, clientOptions),
    actions: createActionsServiceClient(data, clientOptions),
    compute: createComputeServiceClient(api, clientOptions),
    secrets: createSecretServiceClient(api, clientOptions),
    builds: createBuildServiceClient(api, clientOptions),
    pipelines: createPipelineServiceClient(data, clientOptions),
    sources: createSourceServiceClient(data, clientOptions),
    ingest: createIngestServiceClient(data, clientOptions),
    vector: createVectorServiceClient(data, clientOptions),
    vectorData: createVectorDataServiceClient(data, clientOptions),
    vectorDb: createVectorDbServiceClient(api, clientOptions),
    iam: createIamServiceClient(api, clientOptions),
    identityAdmin: createRestClient<IdentityAdminClient>(IdentityAdminRoutes, {
      baseUrl: options.apiUrl,
      answer: "body",
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...rest,
    }),
    identityIssuer: ({ org, pool, token }) =>
      createIssuerClient({
        identityUrl: options.identityUrl ?? options.apiUrl,
        org,
        pool,
        ...(token !== undefined ? { token } : {}),
        ...rest,
      }),
  };
}

function createTransport(baseUrl: string, options: PlatformClientOptions): Transport {
  const interceptors = [credentials(options), ...(options.interceptors ?? [])];
  const common = {
    baseUrl,
    interceptors,
    useBinaryFormat: options.binary ?? false,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  return options.protocol === "grpc-web" ? createGrpcWebTransport(common) : createConnectTransport(common);
}

function credentials(options: PlatformClientOptions): Interceptor {
  return (next) => (request) => {
    if (options.token !== undefined) request.header.set("authorization", `Bearer ${options.token}`);
    if (options.organization !== undefined) request.header.set("x-organization-name", options.organization);
    return next(request);
  };
}
