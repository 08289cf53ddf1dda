import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { REFERENCE_SCRIPT, REFERENCE_SCRIPT_NAME, RENDERER_FILES } from "./reference-page.js";

/** A file the reference page loads: the renderer's bundle and styles, and our start-up script. */
export interface RendererAsset {
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
}

/** The installed renderer package's folder, found through Node's resolution like any dependency. */
export function rendererPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
}

/**
 * Reads the renderer's files once. Their source-map comments are taken out: the maps are not
 * served, and a browser's developer tools would otherwise ask for them in vain.
 */
export async function loadRendererAssets(packageDir = rendererPackageDir()): Promise<RendererAsset[]> {
  const files = await Promise.all(
    RENDERER_FILES.map(async ({ name, contentType }) => {
      const text = await readFile(join(packageDir, name), "utf8");
      return { name, contentType, body: Buffer.from(withoutSourceMapComment(text)) };
    }),
  );
  return [
    ...files,
    { name: REFERENCE_SCRIPT_NAME, contentType: "text/javascript; charset=utf-8", body: Buffer.from(REFERENCE_SCRIPT) },
  ];
}

function withoutSourceMapComment(text: string): string {
  return text.replace(/\n?(\/\/# sourceMappingURL=[^\n]*|\/\*# sourceMappingURL=[^*]*\*\/)\s*$/, "\n");
}
