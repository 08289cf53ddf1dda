import type { ServiceHttpRoutes } from "@platform/codegen/runtime";
import { IamServiceRoutes } from "../../../gen/platform/iam/v1/iam_service_http.js";
import { ScriptServiceRoutes } from "../../../gen/platform/script/v1/script_service_http.js";
import { SecretServiceRoutes } from "../../../gen/platform/compute/v1/secret_service_http.js";

/**
 * The RPC services server.ts registers on the api listener, for the static reference, which is
 * built without starting a server. The running server documents its router's own bindings
 * instead; the docs end-to-end test checks that the two agree.
 */
export const API_LISTENER_SERVICES: readonly Pick<ServiceHttpRoutes, "routes">[] = [
  ScriptServiceRoutes,
  SecretServiceRoutes,
  IamServiceRoutes,
];
