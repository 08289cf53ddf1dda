import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { CredentialSchema, Provider, SourceSchema } from "../../../../gen/platform/data/source/v1/source_pb.js";
import {
  CreateSourceRequestSchema,
  DeleteCredentialRequestSchema,
  DeleteSourceRequestSchema,
  GetSourceRequestSchema,
  ListCredentialsRequestSchema,
  ListCredentialsResponseSchema,
  ListSourcesRequestSchema,
  ListSourcesResponseSchema,
  SourceService,
  StoreCredentialRequestSchema,
  UpdateSourceRequestSchema,
} from "../../../../gen/platform/data/source/v1/source_service_pb.js";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { principalKey } from "../../auth/principal.js";

/** What the source service's tests share: contexts, bound callers and fixtures. */

/** A handler context of a caller in `orgId` (none: unauthenticated), over `protocol`. */
export function sourceContextOf(orgId: string | undefined, protocol: "connect" | "http" = "connect"): HandlerContext {
  const contextValues = createContextValues();
  if (orgId) contextValues.set(principalKey, { orgId, orgName: "test", keyId: "key", roles: new Set(["admin"]) });
  return createHandlerContext({
    service: SourceService,
    method: SourceService.method.listSources,
    protocolName: protocol,
    requestMethod: "POST",
    url: "http://localhost/platform.data.source.v1.SourceService/ListSources",
    contextValues,
  });
}

/** The error a call fails with; the test fails when it succeeds. */
export async function connectErrorOf(work: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await work();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

export { Code };

export type CreateInit = MessageInitShape<typeof CreateSourceRequestSchema>;
export type StoreInit = MessageInitShape<typeof StoreCredentialRequestSchema>;

export type SourceCaller = ReturnType<typeof sourceCaller>;

/** A caller in `orgId`: the methods of `s` bound to its context, answering full messages. */
export function sourceCaller(s: SourceServiceImplementation, orgId: string) {
  const context = sourceContextOf(orgId);
  return {
    orgId,
    createSource: async (init: CreateInit) =>
      create(SourceSchema, await s.createSource(create(CreateSourceRequestSchema, init), context)),
    getSource: async (bucket: string, sourceId: string) =>
      create(SourceSchema, await s.getSource(create(GetSourceRequestSchema, { bucket, sourceId }), context)),
    listSources: async (init: MessageInitShape<typeof ListSourcesRequestSchema>, protocol?: "http") =>
      create(
        ListSourcesResponseSchema,
        await s.listSources(
          create(ListSourcesRequestSchema, init),
          protocol ? sourceContextOf(orgId, protocol) : context,
        ),
      ),
    updateSource: async (init: MessageInitShape<typeof UpdateSourceRequestSchema>) =>
      create(SourceSchema, await s.updateSource(create(UpdateSourceRequestSchema, init), context)),
    deleteSource: async (bucket: string, sourceId: string) =>
      s.deleteSource(create(DeleteSourceRequestSchema, { bucket, sourceId }), context),
    storeCredential: async (init: StoreInit) =>
      create(CredentialSchema, await s.storeCredential(create(StoreCredentialRequestSchema, init), context)),
    listCredentials: async (init: MessageInitShape<typeof ListCredentialsRequestSchema> = {}) =>
      create(
        ListCredentialsResponseSchema,
        await s.listCredentials(create(ListCredentialsRequestSchema, init), context),
      ),
    deleteCredential: async (credentialId: string) =>
      s.deleteCredential(create(DeleteCredentialRequestSchema, { credentialId }), context),
  };
}

export const accessKey = (secret = "s3-secret-value"): StoreInit["secret"] => ({
  case: "accessKey",
  value: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: secret },
});

/** An S3 source in `bucket`, with an access key credential stored for it. */
export async function s3Source(org: SourceCaller, name = "archive", bucket = "docs") {
  const credential = await org.storeCredential({ name: "s3", provider: Provider.AMAZON_S3, secret: accessKey() });
  return org.createSource({
    bucket,
    name,
    provider: Provider.AMAZON_S3,
    credentialId: credential.credentialId,
    config: { bucket: "customer-archive", prefix: "reports/", endpoint: "https://minio.example.com" },
  });
}
