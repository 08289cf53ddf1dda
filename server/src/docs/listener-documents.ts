import { readFile } from "node:fs/promises";
import type { RestPlane } from "@platform/codegen/runtime";
import { parse as parseYaml } from "yaml";
import { mergeDocuments } from "./merge-documents.js";
import type { OpenApiDocument, OpenApiServer } from "./openapi-document.js";
import { restrictToServedRoutes, servedRoutesOfRestPlane, type ServedRoute } from "./served-routes.js";

/**
 * The contract documents the listeners' documents are made of: the generated document of every
 * RPC service's HTTP routes, and the REST planes' own documents (their generated code carries no
 * document, so the source in openapi/ is read, as the generator reads it).
 */
export interface ContractDocuments {
  readonly platform: OpenApiDocument;
  readonly identityAdmin: OpenApiDocument;
  readonly identityIssuer: OpenApiDocument;
}

const repoRoot = new URL("../../../", import.meta.url);

export async function loadContractDocuments(root: URL = repoRoot): Promise<ContractDocuments> {
  const [platform, identityAdmin, identityIssuer] = await Promise.all([
    readFile(new URL("gen/openapi/platform.openapi.json", root), "utf8").then(
      (text) => JSON.parse(text) as OpenApiDocument,
    ),
    readFile(new URL("openapi/identity-admin.yaml", root), "utf8").then((text) => parseYaml(text) as OpenApiDocument),
    readFile(new URL("openapi/identity-issuer.yaml", root), "utf8").then((text) => parseYaml(text) as OpenApiDocument),
  ]);
  return { platform, identityAdmin, identityIssuer };
}

export interface ApiListenerRoutes {
  /** The HTTP routes of the RPC services registered on the listener's router. */
  readonly rpc: readonly ServedRoute[];
  /** The identity admin plane's route table, mounted at its base path. */
  readonly identityAdmin: RestPlane;
}

/**
 * The api listener's document: the RPC services' HTTP routes it serves, and the identity admin
 * API under its base path. `origin` is where clients reach the listener (`--public-api-url`), or
 * empty for "the origin this document was read from".
 */
export function apiListenerDocument(
  contract: ContractDocuments,
  routes: ApiListenerRoutes,
  origin: string,
): OpenApiDocument {
  const rpc = restrictToServedRoutes(contract.platform, routes.rpc);
  const admin = mountAt(
    restrictToServedRoutes(contract.identityAdmin, servedRoutesOfRestPlane(routes.identityAdmin)),
    routes.identityAdmin,
  );
  const merged = mergeDocuments(rpc, admin.document, "identityAdmin");
  const services = (merged.tags ?? []).map((tag) => tag.name).join(", ");
  return {
    ...merged,
    info: {
      title: "Platform API",
      version: contract.platform.info.version,
      description:
        `The HTTP/JSON routes of the api listener (${services}). Every call but the public ones carries ` +
        "`Authorization: Bearer dk_…`; the script service also wants `x-organization-name`. The RPC services' " +
        "methods also answer Connect, gRPC and gRPC-web at `POST /<package>.<Service>/<Method>` on the same port.",
    },
    servers: [{ url: origin === "" ? "/" : origin, description: "The api listener." }],
  };
}

/**
 * The data listener's document: the HTTP routes of the data platform's services it serves
 * (pipelines, sources, ingest, vector engine and search, actions), under `/{bucket}`, `/actions`
 * and `/admin`. `origin` as for the api listener.
 */
export function dataListenerDocument(
  contract: ContractDocuments,
  routes: readonly ServedRoute[],
  origin: string,
): OpenApiDocument {
  const document = restrictToServedRoutes(contract.platform, routes);
  const services = (document.tags ?? []).map((tag) => tag.name).join(", ");
  return {
    ...document,
    info: {
      title: "Platform data API",
      version: contract.platform.info.version,
      description:
        `The HTTP/JSON routes of the data listener (${services}). Every call carries ` +
        "`Authorization: Bearer dk_…`; the key's organization scopes every bucket. Every field of an answer is " +
        "written, unset ones with their defaults (`null` for an absent message). The RPC services' methods also " +
        "answer Connect, gRPC and gRPC-web at `POST /<package>.<Service>/<Method>` on the same port.",
    },
    servers: [{ url: origin === "" ? "/" : origin, description: "The data listener." }],
  };
}

/** The identity listener's document: every pool's issuer, under `{origin}/{org}/{pool}`. */
export function identityListenerDocument(
  contract: ContractDocuments,
  issuerRoutes: RestPlane,
  origin: string,
): OpenApiDocument {
  const issuer = mountAt(
    restrictToServedRoutes(contract.identityIssuer, servedRoutesOfRestPlane(issuerRoutes)),
    issuerRoutes,
  );
  return {
    ...issuer.document,
    servers: [
      {
        ...issuer.server,
        url: `${origin}${issuer.server.url}`,
        description: "A pool's issuer on the identity listener.",
      },
    ],
  };
}

/**
 * A REST plane's document placed where its route table is served. Its paths are relative to the
 * plane's base path: a fixed one (`/v1/identity`) becomes part of every path, so that documents
 * can be merged; one with variables (`/{org}/{pool}`) stays in the server URL, whose variables
 * the reader fills, with the defaults the plane's document gives them.
 */
function mountAt(document: OpenApiDocument, plane: RestPlane): { document: OpenApiDocument; server: OpenApiServer } {
  const base = plane.basePath.source === "/" ? "" : plane.basePath.source;
  const { servers, ...rest } = document;
  if (plane.basePath.variables.length === 0) {
    const paths = Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [`${base}${path}`, item]));
    return { document: { ...rest, paths }, server: { url: "" } };
  }
  const names = plane.basePath.variables.map((variable) => variable.fieldPath);
  const declared = servers?.[0]?.variables ?? {};
  const variables = Object.fromEntries(names.map((name) => [name, declared[name] ?? { default: name }]));
  return { document: rest, server: { url: base, variables } };
}
