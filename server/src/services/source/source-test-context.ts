import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { SourceService } from "../../../../gen/platform/data/source/v1/source_service_pb.js";
import { principalKey } from "../../auth/principal.js";

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
