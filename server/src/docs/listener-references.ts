import type { RestPlane } from "@platform/codegen/runtime";
import type { NodeRequestHandler } from "../transport/plane-handler.js";
import { createDocsMiddleware } from "./docs-handler.js";
import { apiListenerDocument, identityListenerDocument, loadContractDocuments, type ApiListenerRoutes } from "./listener-documents.js";
import { loadRendererAssets } from "./renderer-assets.js";

export type DocsMiddleware = (next: NodeRequestHandler) => NodeRequestHandler;

export interface ListenerReferencesOptions {
  /** What the api listener serves, from its router and route tables. */
  readonly apiRoutes: ApiListenerRoutes;
  /** The identity listener's issuer route table. */
  readonly issuerRoutes: RestPlane;
  /** `--public-api-url`: the api document's server; unset names the origin the document is read from. */
  readonly publicApiUrl?: string | undefined;
  /** `--public-identity-url`: the base of the issuer document's server. */
  readonly publicIdentityUrl?: string | undefined;
}

/**
 * Each listener's `/openapi.json` and `/docs`, assembled once at start from the contract documents
 * and what the listener really routes, and held ready to serve. The renderer's files are read once
 * for both.
 */
export async function createListenerReferences(options: ListenerReferencesOptions): Promise<{ api: DocsMiddleware; identity: DocsMiddleware }> {
  const [contract, assets] = await Promise.all([loadContractDocuments(), loadRendererAssets()]);
  const [api, identity] = await Promise.all([
    createDocsMiddleware({ title: "Platform API: api listener", assets, document: apiListenerDocument(contract, options.apiRoutes, withoutTrailingSlash(options.publicApiUrl)) }),
    createDocsMiddleware({ title: "Platform API: identity listener", assets, document: identityListenerDocument(contract, options.issuerRoutes, withoutTrailingSlash(options.publicIdentityUrl)) }),
  ]);
  return { api, identity };
}

function withoutTrailingSlash(url: string | undefined): string {
  return (url ?? "").replace(/\/+$/, "");
}
