import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "./binding-model.js";
import { RUNTIME_MODULE } from "./runtime-module.js";

/**
 * Emits a service's HTTP route table: data only (method, parsed template, body, response body,
 * query fields, stream framing), which the server compiles into its router.
 */
export function emitRoutes(f: GeneratedFile, model: ServiceModel): void {
  const service = f.importSchema(model.service);
  const routesType = f.import("ServiceHttpRoutes", RUNTIME_MODULE, true);
  const name = `${model.service.name}HttpRoutes`;
  f.print(f.jsDoc(`HTTP routes of ${model.service.typeName}, from its google.api.http annotations.`));
  f.print(f.export("const", name), ": ", routesType, "<typeof ", service, "> = {");
  f.print("  service: ", service, ",");
  f.print("  routes: [");
  for (const method of model.methods) {
    for (const route of method.routes) {
      f.print("    {");
      f.print("      rpc: ", f.string(route.rpc), ",");
      f.print("      httpMethod: ", f.string(route.httpMethod), ",");
      f.print("      template: ", JSON.stringify(route.template), ",");
      f.print("      body: ", f.string(route.body), ",");
      f.print("      responseBody: ", f.string(route.responseBody), ",");
      f.print("      queryFields: ", JSON.stringify(route.queryFields), ",");
      if (route.streamFraming) f.print("      streamFraming: ", f.string(route.streamFraming), ",");
      f.print("      additionalBinding: ", String(route.additionalBinding), ",");
      f.print("    },");
    }
  }
  f.print("  ],");
  f.print("};");
  f.print();
}
