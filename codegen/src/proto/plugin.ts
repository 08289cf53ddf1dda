import type { DescFile } from "@bufbuild/protobuf";
import { createEcmaScriptPlugin, type Schema } from "@bufbuild/protoplugin";
import { findAmbiguousRoutes, formatPathTemplate } from "../../runtime/path-template/index.js";
import { buildServiceModel, type ServiceModel } from "./binding-model.js";
import { emitClient } from "./emit-client.js";
import { emitRoutes } from "./emit-routes.js";
import { emitServer } from "./emit-server.js";
import { GenerationError } from "../generation-error.js";
import { emitOpenApiDocuments } from "./openapi/emit-openapi.js";
import { createOptionReader } from "./options.js";
import { emitProtoTsFile } from "./proto-ts-file.js";

/**
 * protoc-gen-platform: for every proto file with services, writes `<file>_http.ts` (route table),
 * `<file>_server.ts` (service glue) and `<file>_client.ts` (SDK client) beside protoc-gen-es's
 * `<file>_pb.ts`, and OpenAPI 3.1 documents under `openapi/`.
 *
 * The gRPC protocol services (`grpc.*`: server reflection, health) are left out: the transport
 * serves them itself on the gRPC protocols only, so they have no HTTP route, SDK client or
 * OpenAPI path; protoc-gen-es still writes their message types.
 */
export const platformPlugin = createEcmaScriptPlugin({
  name: "protoc-gen-platform",
  version: "v1",
  generateTs,
});

function generateTs(schema: Schema): void {
  const options = createOptionReader(schema.allFiles);
  const models: ServiceModel[] = [];
  for (const file of schema.files) {
    if (file.services.length === 0 || isGrpcProtocolFile(file)) continue;
    const fileModels = file.services.map((service) => buildServiceModel(service, options));
    models.push(...fileModels);
    const services = fileModels.map((m) => m.service.typeName).join(", ");
    emitProtoTsFile(schema, file, "_http", `HTTP route table of ${services}.`, (f) =>
      fileModels.forEach((m) => emitRoutes(f, m)),
    );
    const routesFile = `./${file.name}_http.js`;
    emitProtoTsFile(
      schema,
      file,
      "_server",
      `Service glue of ${services}: implementation type, access rules, registration.`,
      (f) => fileModels.forEach((m) => emitServer(f, m, routesFile)),
    );
    emitProtoTsFile(schema, file, "_client", `SDK client of ${services}.`, (f) =>
      fileModels.forEach((m) => emitClient(f, m)),
    );
  }
  rejectAmbiguousRoutes(models);
  for (const { name, content } of emitOpenApiDocuments(models, options)) {
    schema.generateFile(name).print(content);
  }
}

function isGrpcProtocolFile(file: DescFile): boolean {
  return file.proto.package === "grpc" || file.proto.package.startsWith("grpc.");
}

/**
 * Two routes with the same HTTP method that match the same paths, and that the literal-first rule
 * cannot order, would make a request's target depend on registration order: refuse them here.
 */
function rejectAmbiguousRoutes(models: readonly ServiceModel[]): void {
  const routes = models.flatMap((model) =>
    model.methods.flatMap((m) =>
      m.routes.map((route) => ({
        httpMethod: route.httpMethod,
        template: route.template,
        target: `${model.service.typeName}.${m.method.name}`,
      })),
    ),
  );
  const pairs = findAmbiguousRoutes(routes);
  if (pairs.length > 0) {
    const lines = pairs.map(
      ([a, b]) =>
        `${a.httpMethod} ${formatPathTemplate(a.template)} (${a.target}) and ${b.httpMethod} ${formatPathTemplate(b.template)} (${b.target})`,
    );
    throw new GenerationError(`ambiguous HTTP routes:\n  ${lines.join("\n  ")}`);
  }
}
