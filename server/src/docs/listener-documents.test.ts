import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { IdentityAdminRoutes } from "../../../gen/openapi/identity-admin/routes.js";
import { IdentityIssuerRoutes } from "../../../gen/openapi/identity-issuer/routes.js";
import { API_LISTENER_SERVICES, DATA_LISTENER_SERVICES } from "./api-listener-services.js";
import {
  apiListenerDocument,
  dataListenerDocument,
  identityListenerDocument,
  loadContractDocuments,
} from "./listener-documents.js";
import type { OpenApiDocument } from "./openapi-document.js";
import { servedRoutesOfBindings } from "./served-routes.js";

// The listeners' documents, assembled from the committed contract documents and route tables.
const contract = await loadContractDocuments();
const api = apiListenerDocument(
  contract,
  { rpc: servedRoutesOfBindings(API_LISTENER_SERVICES), identityAdmin: IdentityAdminRoutes },
  "",
);
const identity = identityListenerDocument(contract, IdentityIssuerRoutes, "");
const data = dataListenerDocument(contract, servedRoutesOfBindings(DATA_LISTENER_SERVICES), "");

describe.each([
  ["api", api],
  ["data", data],
  ["identity", identity],
] as const)("the %s listener's document", (_name, document) => {
  it("validates as OpenAPI 3.1", async () => {
    const result = await new Validator().validate(
      structuredClone(document) as unknown as Parameters<Validator["validate"]>[0],
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("resolves every reference inside itself", () => {
    const refs = [...JSON.stringify(document).matchAll(/"#\/components\/([^/"]+)\/([^"]+)"/g)].map(
      (m) => [m[1]!, m[2]!] as const,
    );
    expect(refs.length).toBeGreaterThan(0);
    for (const [kind, name] of refs) expect(document.components?.[kind]?.[name], `${kind}/${name}`).toBeDefined();
  });
});

describe("the data listener's document", () => {
  it("lists the data services' routes only, with the spec's query names", () => {
    expect(operationCount(data)).toBe(servedRoutesOfBindings(DATA_LISTENER_SERVICES).length);
    expect(Object.keys(data.paths).filter((path) => !/^\/(\{bucket\}|admin|actions)(\/|$)/.test(path))).toEqual([]);
    const list = data.paths["/{bucket}/pipelines"]!["get"] as { parameters: { name: string; in: string }[] };
    const query = list.parameters;
    expect(query.filter((p) => p.in === "query").map((p) => p.name)).toEqual(["facet", "store_entity_id", "free_only"]);
    expect(data.servers).toEqual([{ url: "/", description: "The data listener." }]);
    expect(api.paths["/{bucket}/pipelines"]).toBeUndefined();
  });
});

describe("the api listener's document", () => {
  it("lists the RPC routes of the registered services and the identity admin API under /v1/identity", () => {
    const rpcRoutes = servedRoutesOfBindings(API_LISTENER_SERVICES);
    expect(operationCount(api)).toBe(rpcRoutes.length + IdentityAdminRoutes.operations.length);
    expect(api.paths["/v1/identity/pools/{pool}"]).toBeDefined();
    expect(api.paths["/pools/{pool}"]).toBeUndefined();
    expect(
      Object.keys(api.paths).filter((path) => !/^\/v1\/(script|compute\/secrets|iam|identity)(\/|$)/.test(path)),
    ).toEqual([]);
  });

  it("names the public URL as its server when one is configured, and the document's own origin otherwise", () => {
    expect(api.servers).toEqual([{ url: "/", description: "The api listener." }]);
    const configured = apiListenerDocument(
      contract,
      { rpc: [], identityAdmin: IdentityAdminRoutes },
      "https://api.example.com",
    );
    expect(configured.servers?.[0]?.url).toBe("https://api.example.com");
  });
});

describe("the identity listener's document", () => {
  it("keeps the issuer's paths relative to a pool, under a server whose variables name it", () => {
    expect(operationCount(identity)).toBe(IdentityIssuerRoutes.operations.length);
    expect(identity.paths["/token"]).toBeDefined();
    expect(identity.servers).toEqual([
      {
        url: "/{org}/{pool}",
        description: "A pool's issuer on the identity listener.",
        variables: {
          org: contract.identityIssuer.servers![0]!.variables!.org,
          pool: contract.identityIssuer.servers![0]!.variables!.pool,
        },
      },
    ]);
    expect(identityListenerDocument(contract, IdentityIssuerRoutes, "https://id.example.com").servers?.[0]?.url).toBe(
      "https://id.example.com/{org}/{pool}",
    );
  });
});

function operationCount(document: OpenApiDocument): number {
  return Object.values(document.paths).reduce(
    (count, item) =>
      count + Object.keys(item).filter((key) => ["get", "put", "post", "delete", "patch"].includes(key)).length,
    0,
  );
}
