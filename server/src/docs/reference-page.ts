/**
 * The reference page: Swagger UI (from the `swagger-ui-dist` package, served by us) rendering one
 * listener's OpenAPI document. Chosen because its package is the prebuilt browser files and
 * nothing else (one install-time dependency, whose analytics the root package.json turns off),
 * and it installs on Node 20; `@scalar/api-reference` asks for Node 22, which `engine-strict`
 * refuses, and brings a large dependency tree for the same page. Nothing on the page comes from another host: the renderer's styles
 * carry no web fonts (its icons are data: URLs), and the online validator badge, which would
 * send the document's URL to another host, is turned off.
 */

/** The renderer's files, as the package ships them, under the names the page asks for. */
export const RENDERER_FILES = [
  { name: "swagger-ui-bundle.js", contentType: "text/javascript; charset=utf-8" },
  { name: "swagger-ui.css", contentType: "text/css; charset=utf-8" },
] as const;

/** Our script that starts the renderer; a file of its own, so the page's CSP needs no inline script. */
export const REFERENCE_SCRIPT_NAME = "reference.js";

/**
 * Renders the document at the page's `data-document-url` or, in the static site (opened from disk,
 * where a page may not fetch files), the one a script put in `platformOpenApiDocument`.
 */
export const REFERENCE_SCRIPT = `"use strict";
window.addEventListener("load", function () {
  var root = document.getElementById("reference");
  var inline = window.platformOpenApiDocument;
  window.ui = SwaggerUIBundle({
    dom_id: "#reference",
    url: inline ? undefined : root.getAttribute("data-document-url"),
    spec: inline,
    validatorUrl: null,
    deepLinking: true,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
`;

export interface ReferencePageOptions {
  readonly title: string;
  /** Where the renderer's files and our script are, relative to the page (`docs/`, `../assets/`). */
  readonly assetBase: string;
  /** The document's URL relative to the page; absent when `inlineDocumentScript` defines it. */
  readonly documentUrl?: string;
  /** A script, relative to the page, that sets `window.platformOpenApiDocument`. */
  readonly inlineDocumentScript?: string;
}

export function referencePageHtml(options: ReferencePageOptions): string {
  const { assetBase } = options;
  const documentScript = options.inlineDocumentScript
    ? `\n<script src="${escapeHtml(options.inlineDocumentScript)}"></script>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(assetBase)}swagger-ui.css">
</head>
<body>
<div id="reference" data-document-url="${escapeHtml(options.documentUrl ?? "")}"></div>${documentScript}
<script src="${escapeHtml(assetBase)}swagger-ui-bundle.js"></script>
<script src="${escapeHtml(assetBase)}${REFERENCE_SCRIPT_NAME}"></script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
