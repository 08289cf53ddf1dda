// `npm run docs [DIR]`: the API reference of every listener as a static site (default
// `docs-site/`), which opens from disk with no network.
import { join, resolve } from "node:path";
import { buildStaticSite } from "../server/src/docs/static-site.js";

const outDir = resolve(process.argv[2] ?? "docs-site");
const files = await buildStaticSite(outDir);
console.log(`API reference: ${files.length} files written; open ${join(outDir, "index.html")}`);
