import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
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
import { referencePageHtml } from "./reference-page.js";
import { loadRendererAssets } from "./renderer-assets.js";
import { servedRoutesOfBindings } from "./served-routes.js";

/** The listeners' default addresses, which a reader of the static site can change in the page. */
const DEFAULT_API_URL = "http://127.0.0.1:8080";
const DEFAULT_DATA_URL = "http://127.0.0.1:8081";
const DEFAULT_IDENTITY_URL = "http://127.0.0.1:8084";

/** One listener's section of the site. */
interface SiteSection {
  readonly folder: string;
  readonly title: string;
  readonly summary: string;
  readonly document: OpenApiDocument;
}

/**
 * Writes the API reference as files that open from disk with no network: `index.html` linking
 * each listener's page, `<listener>/index.html` with its document beside it (as `openapi.json`,
 * and as `openapi.js`, which a page opened from disk may load where it may not fetch), and the
 * renderer's files in `assets/`. The documents are the ones the listeners serve, except that
 * their server is the listener's default address, as a variable the reader can change.
 */
export async function buildStaticSite(outDir: string): Promise<string[]> {
  const [contract, assets] = await Promise.all([loadContractDocuments(), loadRendererAssets()]);
  const api = apiListenerDocument(
    contract,
    { rpc: servedRoutesOfBindings(API_LISTENER_SERVICES), identityAdmin: IdentityAdminRoutes },
    "{api_url}",
  );
  const data = dataListenerDocument(contract, servedRoutesOfBindings(DATA_LISTENER_SERVICES), "{data_api_url}");
  const identity = identityListenerDocument(contract, IdentityIssuerRoutes, "{identity_url}");
  const sections: SiteSection[] = [
    {
      folder: "api",
      title: "Platform API: api listener",
      summary: "RPC services over HTTP/JSON and the identity admin API (`--api-port`, 8080).",
      document: withServerVariable(api, "api_url", DEFAULT_API_URL, "The api listener's address."),
    },
    {
      folder: "data",
      title: "Platform API: data listener",
      summary:
        "The data platform: pipelines, sources, ingest, vector engine and search, actions (`--data-port`, 8081).",
      document: withServerVariable(data, "data_api_url", DEFAULT_DATA_URL, "The data listener's address."),
    },
    {
      folder: "identity",
      title: "Platform API: identity listener",
      summary: "Every identity pool's OpenID Connect issuer (`--identity-port`, 8084).",
      document: withServerVariable(identity, "identity_url", DEFAULT_IDENTITY_URL, "The identity listener's address."),
    },
  ];

  const written: string[] = [];
  const write = async (path: string, content: string | Buffer) => {
    await mkdir(dirname(join(outDir, path)), { recursive: true });
    await writeFile(join(outDir, path), content);
    written.push(path);
  };
  for (const asset of assets) await write(`assets/${asset.name}`, asset.body);
  for (const section of sections) {
    const json = JSON.stringify(section.document, null, 2);
    await write(`${section.folder}/openapi.json`, json + "\n");
    await write(`${section.folder}/openapi.js`, `window.platformOpenApiDocument = ${json};\n`);
    await write(
      `${section.folder}/index.html`,
      referencePageHtml({ title: section.title, assetBase: "../assets/", inlineDocumentScript: "openapi.js" }),
    );
  }
  await write("index.html", siteIndexHtml(sections));
  return written;
}

function withServerVariable(
  document: OpenApiDocument,
  name: string,
  defaultUrl: string,
  description: string,
): OpenApiDocument {
  const servers = (document.servers ?? []).map((server) => ({
    ...server,
    variables: { [name]: { default: defaultUrl, description }, ...server.variables },
  }));
  return { ...document, servers };
}

function siteIndexHtml(sections: readonly SiteSection[]): string {
  const items = sections
    .map(
      (s) =>
        `<li><a href="${s.folder}/index.html">${s.title}</a>: ${s.summary.replace(/`([^`]*)`/g, "<code>$1</code>")}</li>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Platform API reference</title>
<link rel="icon" href="data:,">
</head>
<body style="font-family: sans-serif; max-width: 48rem; margin: 2rem auto">
<h1>Platform API reference</h1>
<ul>
${items}
</ul>
</body>
</html>
`;
}
