import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, createFileRegistry, fromBinary, type FileRegistry } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema, type FileDescriptorSet } from "@bufbuild/protobuf/wkt";
import { platformPlugin } from "../src/proto/plugin.js";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The imports a test proto may use, copied beside it so buf resolves them offline. */
const importable = [
  ["node_modules/google-proto-files/google/api/annotations.proto", "google/api/annotations.proto"],
  ["node_modules/google-proto-files/google/api/http.proto", "google/api/http.proto"],
  ["node_modules/google-proto-files/google/api/field_behavior.proto", "google/api/field_behavior.proto"],
  ["proto/platform/api/v1/annotations.proto", "platform/api/v1/annotations.proto"],
] as const;

export interface CompiledProtos {
  readonly set: FileDescriptorSet;
  readonly registry: FileRegistry;
  /** Names of the test's own files (not the imports). */
  readonly files: readonly string[];
}

/** Compiles inline `.proto` sources with the real buf, as `buf generate` would see them. */
export async function compileProtos(sources: Record<string, string>): Promise<CompiledProtos> {
  const dir = await mkdtemp(join(tmpdir(), "proto-"));
  try {
    await writeFile(join(dir, "buf.yaml"), "version: v2\n");
    for (const [from, to] of importable) {
      await mkdir(dirname(join(dir, to)), { recursive: true });
      await copyFile(join(root, from), join(dir, to));
    }
    for (const [name, text] of Object.entries(sources)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    const image = join(dir, "image.binpb");
    await run(join(root, "node_modules/.bin/buf"), ["build", dir, "--as-file-descriptor-set", "-o", image], {
      cwd: dir,
    });
    const set = fromBinary(FileDescriptorSetSchema, await readFile(image));
    return { set, registry: createFileRegistry(set), files: Object.keys(sources) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs protoc-gen-platform over compiled protos and returns its files by name. */
export function runPlugin(compiled: CompiledProtos): Map<string, string> {
  const request = create(CodeGeneratorRequestSchema, {
    fileToGenerate: [...compiled.files],
    protoFile: compiled.set.file,
    parameter: "target=ts,import_extension=js",
  });
  const response = platformPlugin.run(request);
  if (response.error) throw new Error(response.error);
  return new Map(response.file.map((f) => [f.name, f.content]));
}
