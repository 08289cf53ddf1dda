import {
  createIdentityIssuerHandler,
  type IdentityIssuerImplementation,
} from "../../../../../gen/openapi/identity-issuer/handler.js";
import type { RestPlaneHandler, UnexpectedErrorHandler } from "@platform/codegen/runtime/server";
import { createAccountHandlers } from "./account-handlers.js";
import { createAuthorizeHandlers } from "./authorize-handlers.js";
import { createDiscoveryHandlers } from "./discovery-handlers.js";
import type { IssuerDeps } from "./issuer-context.js";
import { createIssuerMiddleware } from "./issuer-middleware.js";
import { createPageHandlers } from "./page-handlers.js";
import { createSessionHandlers } from "./session-handlers.js";
import { createTokenHandler } from "./token-handler.js";
import { createUserInfoHandlers } from "./userinfo-handlers.js";

/** Every operation of the issuer plane. */
export function createIssuerImplementation(deps: IssuerDeps): IdentityIssuerImplementation {
  return {
    ...createDiscoveryHandlers(deps),
    ...createAuthorizeHandlers(deps),
    ...createTokenHandler(deps),
    ...createAccountHandlers(deps),
    ...createSessionHandlers(deps),
    ...createUserInfoHandlers(deps),
    ...createPageHandlers(),
  };
}

/** The issuer plane, served: routing and validation from the generated layer, then the middleware, then the handlers. */
export function createIssuerHandler(
  deps: IssuerDeps,
  options: { readonly readMaxBytes: number; readonly onUnexpectedError: UnexpectedErrorHandler },
): RestPlaneHandler {
  return createIdentityIssuerHandler(createIssuerImplementation(deps), {
    middleware: [createIssuerMiddleware(deps)],
    readMaxBytes: options.readMaxBytes,
    onUnexpectedError: options.onUnexpectedError,
  });
}
