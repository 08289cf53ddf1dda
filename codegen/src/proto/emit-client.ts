import type { DescMethod } from "@bufbuild/protobuf";
import { type MethodModel, type ServiceModel } from "./binding-model.js";
import { publicComment } from "./public-comment.js";
import type { ProtoTsFile } from "./proto-ts-file.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";

/**
 * Emits the typed SDK client of a service: an interface with one documented method per RPC (plus
 * an item iterator per paginated list), the per-method facts the SDK acts on (idempotency,
 * pagination fields, stream kind), and a factory over any Connect transport.
 */
export function emitClient(f: ProtoTsFile, model: ServiceModel): void {
  const { service } = model;
  const serviceSymbol = f.importSchema(service);
  const transport = f.import("Transport", "@connectrpc/connect", true);
  const callOptions = f.import("CallOptions", "@connectrpc/connect", true);
  const initShape = f.import("MessageInitShape", "@bufbuild/protobuf", true);
  const createServiceClient = f.import("createServiceClient", RUNTIME_MODULE);
  const clientOptions = f.import("ServiceClientOptions", RUNTIME_MODULE, true);
  const methodFacts = f.import("ClientMethodFacts", RUNTIME_MODULE, true);
  const name = service.name;

  f.print(
    f.jsDoc(`Facts about each RPC of ${service.typeName} that the SDK acts on.`),
    `export const ${name}Methods = {`,
  );
  for (const m of model.methods) {
    f.print("  ", m.method.localName, ": ", methodFactsLiteral(m), ",");
  }
  f.print("} as const satisfies Record<string, ", methodFacts, ">;");
  f.print();

  const doc = publicComment(service);
  f.print(f.jsDoc(doc === "" ? `Client of ${service.typeName}.` : doc), `export interface ${name}Client {`);
  for (const m of model.methods) {
    const method = m.method;
    const input = f.importSchema(method.input, true);
    const output = f.importShape(method.output);
    const request = ["request: ", initShape, "<typeof ", input, ">"];
    const doc = f.jsDoc(methodDoc(method), "  ");
    switch (method.methodKind) {
      case "unary":
        f.print(doc, "  ", method.localName, "(", ...request, ", options?: ", callOptions, "): Promise<", output, ">;");
        break;
      case "server_streaming":
        f.print(
          doc,
          "  ",
          method.localName,
          "(",
          ...request,
          ", options?: ",
          callOptions,
          "): AsyncIterable<",
          output,
          ">;",
        );
        break;
      case "client_streaming":
        f.print(
          doc,
          "  ",
          method.localName,
          "(requests: AsyncIterable<",
          initShape,
          "<typeof ",
          input,
          ">>, options?: ",
          callOptions,
          "): Promise<",
          output,
          ">;",
        );
        break;
      case "bidi_streaming":
        f.print(
          doc,
          "  ",
          method.localName,
          "(requests: AsyncIterable<",
          initShape,
          "<typeof ",
          input,
          ">>, options?: ",
          callOptions,
          "): AsyncIterable<",
          output,
          ">;",
        );
        break;
    }
    if (m.pagination) {
      const item = f.importShape(m.pagination.items.message);
      f.print(
        f.jsDoc(`Every item of ${method.name}, fetching pages as the iteration needs them.`, "  "),
        "  ",
        method.localName,
        "All(",
        ...request,
        ", options?: ",
        callOptions,
        "): AsyncIterable<",
        item,
        ">;",
      );
    }
  }
  f.print("}");
  f.print();
  f.print(
    f.jsDoc(`Creates a client of ${service.typeName} over a Connect, gRPC or gRPC-web transport.`),
    `export function create${name}Client(transport: `,
    transport,
    ", options?: ",
    clientOptions,
    `): ${name}Client {`,
  );
  f.print(
    "  return ",
    createServiceClient,
    "<",
    name,
    "Client>(",
    serviceSymbol,
    ", ",
    name,
    "Methods, transport, options);",
  );
  f.print("}");
  f.print();
}

function methodFactsLiteral(m: MethodModel): string {
  const facts: string[] = [`kind: "${m.method.methodKind}"`, `idempotency: "${m.idempotency}"`];
  if (m.pagination) {
    // Local (camelCase) names: the SDK reads and writes these on message objects.
    const p = m.pagination;
    const pageSize = p.pageSize ? `, pageSize: "${p.pageSize.localName}"` : "";
    facts.push(
      `pagination: { pageToken: "${p.pageToken.localName}", nextPageToken: "${p.nextPageToken.localName}", items: "${p.items.localName}"${pageSize} }`,
    );
  }
  if (m.streamFraming) facts.push(`streamFraming: "${m.streamFraming}"`);
  return `{ ${facts.join(", ")} }`;
}

function methodDoc(method: DescMethod): string {
  const doc = publicComment(method);
  return `${doc === "" ? method.name : doc}\n\n@generated from rpc ${method.parent.typeName}.${method.name}`;
}
