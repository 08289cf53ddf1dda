import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "./binding-model.js";
import { RUNTIME_MODULE } from "./runtime-module.js";

/**
 * Emits the server side of a service: the implementation type a handler fills, the access rules
 * from our options, and one registration function that binds the implementation to Connect,
 * gRPC, gRPC-web and the HTTP routes at once.
 */
export function emitServer(f: GeneratedFile, model: ServiceModel, routesFile: string): void {
  const { service } = model;
  const serviceSymbol = f.importSchema(service);
  const serviceImpl = f.import("ServiceImpl", "@connectrpc/connect", true);
  const serviceAccess = f.import("ServiceAccess", RUNTIME_MODULE, true);
  const registrar = f.import("ServiceRegistrar", RUNTIME_MODULE, true);
  const routes = f.import(`${service.name}HttpRoutes`, routesFile);
  const publicMethods = model.methods.filter((m) => m.isPublic).map((m) => m.method.localName);

  f.print(f.jsDoc(`What a handler of ${service.typeName} implements: one function per RPC.`));
  f.print(f.export("type", `${service.name}Implementation`), " = ", serviceImpl, "<typeof ", serviceSymbol, ">;");
  f.print();
  f.print(f.jsDoc(`Who may call ${service.typeName}: the organization header rule and the public methods.`));
  f.print(f.export("const", `${service.name}Access`), ": ", serviceAccess, " = {");
  f.print("  organizationHeader: ", String(model.organizationHeader), ",");
  f.print("  publicMethods: ", JSON.stringify(publicMethods), ",");
  f.print("};");
  f.print();
  f.print(
    f.jsDoc(
      `Serves an implementation of ${service.typeName} over Connect, gRPC, gRPC-web and its HTTP routes. ` +
        "Methods left out of a partial implementation answer UNIMPLEMENTED.",
    ),
  );
  f.print(
    f.export("function", `register${service.name}`),
    "(registrar: ",
    registrar,
    ", implementation: Partial<",
    service.name,
    "Implementation>): void {",
  );
  f.print("  registrar.register({ service: ", serviceSymbol, ", routes: ", routes, ".routes, access: ", service.name, "Access }, implementation);");
  f.print("}");
  f.print();
}
