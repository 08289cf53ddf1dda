import type { DescEnum, DescFile, DescMessage, DescService } from "@bufbuild/protobuf";
import type { GeneratedFile, Schema } from "@bufbuild/protoplugin";
import { createTsFile, type TsFile, type TsImport } from "../printer/ts-file.js";

/** The repository folder of the buf module, for generated headers (buf.yaml). */
export const PROTO_ROOT = "proto";

/** A TsFile that can also import what protoc-gen-es generates for a descriptor. */
export interface ProtoTsFile extends TsFile {
  /** The descriptor's exported constant (`SecretService`, `GetSecretRequestSchema`). */
  importSchema(desc: DescMessage | DescEnum | DescService, typeOnly?: boolean): TsImport;
  /** A message's or enum's TypeScript type (`GetSecretResponse`). */
  importShape(desc: DescMessage | DescEnum): TsImport;
}

/**
 * Prints `<proto file><suffix>.ts` with the shared printer and header. protoplugin is asked only
 * for what it knows, the names and files protoc-gen-es gives descriptors; the text, its imports
 * and its header come from codegen/src/printer, as for the OpenAPI generator.
 */
export function emitProtoTsFile(
  schema: Schema,
  file: DescFile,
  suffix: string,
  description: string,
  emit: (f: ProtoTsFile) => void,
): void {
  const name = `${file.name}${suffix}.ts`;
  const target: GeneratedFile = schema.generateFile(name);
  const printer = createTsFile(name, {
    generator: "codegen/src/proto",
    source: `${PROTO_ROOT}/${file.name}.proto`,
    description,
  });
  const symbol = (from: { name: string; from: string; typeOnly: boolean }): TsImport =>
    printer.import(from.name, from.from, from.typeOnly);
  emit({
    ...printer,
    importSchema: (desc, typeOnly = false) => symbol(target.importSchema(desc, typeOnly)),
    importShape: (desc) => symbol(target.importShape(desc)),
  });
  // The whole text, imports included, is ours: protoplugin writes it as it is.
  target.print(printer.content().replace(/\n$/, ""));
}
