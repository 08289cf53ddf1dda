import type { RestPlane } from "@platform/codegen/runtime";
import type { NodeHandlerFn } from "@platform/codegen/runtime/server";
import { createDocsMiddleware, prepareAssets, type PreparedAssets } from "./docs-middleware.js";
import type { ServedRoute } from "./served-routes.js";
import {
  apiListenerDocument,
  dataListenerDocument,
  identityListenerDocument,
  loadContractDocuments,
  type ApiListenerRoutes,
  type ContractDocuments,
} from "./listener-documents.js";
import { loadRendererAssets } from "./renderer-assets.js";

export type DocsMiddleware = (next: NodeHandlerFn) => NodeHandlerFn;

/** What every listener's reference is made of: the contract documents and the renderer's files. */
export interface ReferenceSources {
  readonly contract: ContractDocuments;
  readonly assets: PreparedAssets;
}

/**
 * Reads and parses the contract documents and prepares the renderer's files, once per process.
 * Started early (it takes a few hundred milliseconds, mostly parsing YAML), it runs while the
 * database opens.
 */
export async function loadReferenceSources(): Promise<ReferenceSources> {
  const [contract, assets] = await Promise.all([loadContractDocuments(), loadRendererAssets().then(prepareAssets)]);
  return { contract, assets };
}

export interface ListenerReferencesOptions {
  /** What the api listener serves, from its router and route tables. */
  readonly apiRoutes: ApiListenerRoutes;
  /** What the data listener serves: its router's HTTP routes. */
  readonly dataRoutes?: readonly ServedRoute[];
  /** `--public-data-api-url`-like base of the data document's server; unset names the origin it is read from. */
  readonly publicDataApiUrl?: string | undefined;
  /** The identity listener's issuer route table. */
  readonly issuerRoutes: RestPlane;
  /** `--public-api-url`: the api document's server; unset names the origin the document is read from. */
  readonly publicApiUrl?: string | undefined;
  /** `--public-identity-url`: the base of the issuer document's server. */
  readonly publicIdentityUrl?: string | undefined;
}

/**
 * Each listener's `/openapi.json` and `/docs`, assembled once at start from the contract documents
 * and what the listener really routes, and held ready to serve. At start rather than at generate
 * time: what a listener serves is known for sure only from its router's bindings, and a document
 * derived from gen/ and committed beside it would be one more output to keep from drifting. The
 * assembly itself takes tens of milliseconds.
 */
export async function createListenerReferences(
  sources: ReferenceSources,
  options: ListenerReferencesOptions,
): Promise<{ api: DocsMiddleware; data: DocsMiddleware; identity: DocsMiddleware }> {
  const { contract, assets } = sources;
  const [api, data, identity] = await Promise.all([
    createDocsMiddleware({
      title: "Platform API: api listener",
      assets,
      document: apiListenerDocument(contract, options.apiRoutes, withoutTrailingSlash(options.publicApiUrl)),
    }),
    createDocsMiddleware({
      title: "Platform API: data listener",
      assets,
      document: dataListenerDocument(
        contract,
        options.dataRoutes ?? [],
        withoutTrailingSlash(options.publicDataApiUrl),
      ),
    }),
    createDocsMiddleware({
      title: "Platform API: identity listener",
      assets,
      document: identityListenerDocument(
        contract,
        options.issuerRoutes,
        withoutTrailingSlash(options.publicIdentityUrl),
      ),
    }),
  ]);
  return { api, data, identity };
}

function withoutTrailingSlash(url: string | undefined): string {
  return (url ?? "").replace(/\/+$/, "");
}
