import { templateLiteral } from "../printer/template-literal.js";
import type { ServiceModel } from "./binding-model.js";
import type { ProtoTsFile } from "./proto-ts-file.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";

/**
 * Emits a service's HTTP route table `<Service>Routes`: data only (method, template text, body,
 * response body, query fields, stream framing), one route per block and one fact per line. The
 * templates are parsed once when the table loads; the server compiles the table into its router.
 */
export function emitRoutes(f: ProtoTsFile, model: ServiceModel): void {
  const service = f.importSchema(model.service);
  const define = f.import("defineHttpRoutes", RUNTIME_MODULE);
  f.print(
    f.jsDoc(`HTTP routes of ${model.service.typeName}, from its google.api.http annotations.`),
    `export const ${routesName(model)} = `,
    define,
    "(",
    service,
    ", [",
  );
  for (const method of model.methods) {
    for (const route of method.routes) {
      const where = `rpc ${model.service.typeName}.${method.method.name}`;
      f.print("  {");
      f.print("    rpc: ", JSON.stringify(route.rpc), ",");
      f.print("    httpMethod: ", JSON.stringify(route.httpMethod), ",");
      f.print("    template: ", templateLiteral(route.template, where), ",");
      f.print("    body: ", JSON.stringify(route.body), ",");
      f.print("    responseBody: ", JSON.stringify(route.responseBody), ",");
      f.print("    queryFields: ", JSON.stringify(route.queryFields), ",");
      if (route.queryCasing) f.print("    queryCasing: ", JSON.stringify(route.queryCasing), ",");
      if (route.queryAliases) f.print("    queryAliases: ", JSON.stringify(route.queryAliases), ",");
      if (route.queryEnumNumbers) f.print("    queryEnumNumbers: ", JSON.stringify(route.queryEnumNumbers), ",");
      if (route.queryIgnored) f.print("    queryIgnored: ", JSON.stringify(route.queryIgnored), ",");
      if (route.emitUnpopulated) f.print("    emitUnpopulated: true,");
      if (route.streamFraming) f.print("    streamFraming: ", JSON.stringify(route.streamFraming), ",");
      if (route.streamErrorEvent) f.print("    streamErrorEvent: ", JSON.stringify(route.streamErrorEvent), ",");
      f.print("    additionalBinding: ", String(route.additionalBinding), ",");
      f.print("  },");
    }
  }
  f.print("]);");
  f.print();
}

/** `<Service>Routes`: the route table's name, as the OpenAPI generator names a plane's. */
export function routesName(model: ServiceModel): string {
  return `${model.service.name}Routes`;
}
