import { toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/**
 * What the reflection service answers from: the files of the served services and every file they
 * import, by name, by the symbols they define and by the extensions they declare. Built from the
 * descriptors protoc-gen-es embeds in gen/, so the server needs no .proto file at run time.
 */
export interface ReflectionIndex {
  /** Fully-qualified names of the served services, sorted. */
  readonly serviceNames: readonly string[];
  /** The file with that name, serialized, then its transitive dependencies; undefined if unknown. */
  fileByName(name: string): Uint8Array[] | undefined;
  /** The file defining a service, method, message, field, oneof, enum, enum value or extension. */
  fileContainingSymbol(symbol: string): Uint8Array[] | undefined;
  /** The file declaring extension `number` of the message `extendee`. */
  fileContainingExtension(extendee: string, number: number): Uint8Array[] | undefined;
  /** The extension numbers known for a message, ascending; undefined for a message nobody serves. */
  extensionNumbersOf(message: string): number[] | undefined;
}

export function createReflectionIndex(services: readonly DescService[]): ReflectionIndex {
  const files = new Map<string, DescFile>();
  const symbols = new Map<string, DescFile>();
  const messages = new Set<string>();
  const extensions = new Map<string, Map<number, DescFile>>();

  const visit = (file: DescFile): void => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
    for (const type of nestedTypes(file)) {
      symbols.set(type.typeName, file);
      switch (type.kind) {
        case "message":
          messages.add(type.typeName);
          for (const field of type.fields) symbols.set(`${type.typeName}.${field.name}`, file);
          for (const oneof of type.oneofs) symbols.set(`${type.typeName}.${oneof.name}`, file);
          break;
        case "enum": {
          // Enum values are scoped like C++ enumerators: siblings of their enum, not children.
          const scope = type.typeName.slice(0, type.typeName.length - type.name.length);
          for (const value of type.values) symbols.set(`${scope}${value.name}`, file);
          break;
        }
        case "service":
          for (const method of type.methods) symbols.set(`${type.typeName}.${method.name}`, file);
          break;
        case "extension": {
          const byNumber = extensions.get(type.extendee.typeName) ?? new Map<number, DescFile>();
          byNumber.set(type.number, file);
          extensions.set(type.extendee.typeName, byNumber);
          break;
        }
      }
    }
  };
  for (const service of services) visit(service.file);

  // Serialized once per file: a reflection client asks for the same few files again and again.
  const serialized = new Map<string, Uint8Array>();
  const bytesOf = (file: DescFile): Uint8Array => {
    let bytes = serialized.get(file.name);
    if (!bytes) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      serialized.set(file.name, bytes);
    }
    return bytes;
  };
  // The file first (clients take it as the answer), then every file it needs, each once: clients
  // resolve the imports by name, so their order does not matter.
  const withDependencies = (file: DescFile | undefined): Uint8Array[] | undefined => {
    if (!file) return undefined;
    const order: DescFile[] = [];
    const seen = new Set<string>();
    const walk = (f: DescFile): void => {
      if (seen.has(f.proto.name)) return;
      seen.add(f.proto.name);
      order.push(f);
      f.dependencies.forEach(walk);
    };
    walk(file);
    return order.map(bytesOf);
  };

  return {
    serviceNames: [...new Set(services.map((s) => s.typeName))].sort(),
    fileByName: (name) => withDependencies(files.get(name)),
    fileContainingSymbol: (symbol) => withDependencies(symbols.get(symbol.replace(/^\./, ""))),
    fileContainingExtension: (extendee, number) =>
      withDependencies(extensions.get(extendee.replace(/^\./, ""))?.get(number)),
    extensionNumbersOf(message) {
      const name = message.replace(/^\./, "");
      if (!messages.has(name)) return undefined;
      return [...(extensions.get(name)?.keys() ?? [])].sort((a, b) => a - b);
    },
  };
}
