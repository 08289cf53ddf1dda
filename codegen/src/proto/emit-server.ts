import { NOT_IMPLEMENTED_DOC } from "../not-implemented.js";
import type { ServiceModel } from "./binding-model.js";
import { routesName } from "./emit-routes.js";
import type { ProtoTsFile } from "./proto-ts-file.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";

/**
 * Emits the server side of a service: the implementation type a handler fills, the access rules
 * from our options, and one registration function that binds the implementation to Connect,
 * gRPC, gRPC-web and the HTTP routes at once.
 */
export function emitServer(f: ProtoTsFile, model: ServiceModel, routesFile: string): void {
  const { service } = model;
  const serviceSymbol = f.importSchema(service);
  const serviceImpl = f.import("ServiceImpl", "@connectrpc/connect", true);
  const serviceAccess = f.import("ServiceAccess", RUNTIME_MODULE, true);
  const registrar = f.import("ServiceRegistrar", RUNTIME_MODULE, true);
  const routes = f.import(routesName(model), routesFile);
  const publicMethods = model.methods.filter((m) => m.isPublic).map((m) => m.method.localName);
  const streamErrorEvents = Object.fromEntries(
    model.methods.flatMap((m) =>
      m.streamErrorEvent ? [[m.method.localName, m.streamErrorEvent.map((field) => field.name).join(".")]] : [],
    ),
  );
  const streamErrorEventsEntry =
    Object.keys(streamErrorEvents).length > 0 ? `, streamErrorEvents: ${JSON.stringify(streamErrorEvents)}` : "";

  f.print(
    f.jsDoc(`What a handler of ${service.typeName} implements: one function per RPC.`),
    `export type ${service.name}Implementation = `,
    serviceImpl,
    "<typeof ",
    serviceSymbol,
    ">;",
  );
  f.print();
  f.print(
    f.jsDoc(`Who may call ${service.typeName}: the organization header rule and the public methods.`),
    `export const ${service.name}Access: `,
    serviceAccess,
    " = {",
  );
  f.print("  organizationHeader: ", String(model.organizationHeader), ",");
  f.print("  publicMethods: ", JSON.stringify(publicMethods), ",");
  f.print("};");
  f.print();
  f.print(
    f.jsDoc(
      `Serves an implementation of ${service.typeName} over Connect, gRPC, gRPC-web and its HTTP routes.\n\n${NOT_IMPLEMENTED_DOC}`,
    ),
    `export function register${service.name}(registrar: `,
    registrar,
    `, implementation: Partial<${service.name}Implementation>): void {`,
  );
  f.print(
    "  registrar.register({ service: ",
    serviceSymbol,
    ", routes: ",
    routes,
    ".routes, access: ",
    service.name,
    `Access${streamErrorEventsEntry} }, implementation);`,
  );
  f.print("}");
  f.print();
}
