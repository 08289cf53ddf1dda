import { createTsFile, type TsFile } from "../printer/ts-file.js";
import type { PlaneModel } from "./plane-model.js";

/** A file of `gen/openapi/<plane>/`, printed with the shared printer and header. */
export function createPlaneFile(plane: PlaneModel, name: string, description: string): TsFile {
  return createTsFile(name, { generator: "codegen/src/openapi", source: plane.source, description });
}
