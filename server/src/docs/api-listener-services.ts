import type { ServiceHttpRoutes } from "@platform/codegen/runtime";
import { ActionsServiceRoutes } from "../../../gen/platform/data/actions/v1/actions_service_http.js";
import { IngestServiceRoutes } from "../../../gen/platform/data/ingest/v1/ingest_service_http.js";
import { PipelineServiceRoutes } from "../../../gen/platform/data/pipeline/v1/pipeline_service_http.js";
import { SourceServiceRoutes } from "../../../gen/platform/data/source/v1/source_service_http.js";
import { VectorDataServiceRoutes } from "../../../gen/platform/data/vector/v1/vector_data_service_http.js";
import { VectorServiceRoutes } from "../../../gen/platform/data/vector/v1/vector_service_http.js";
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

/** The RPC services server.ts registers on the data listener, for the static reference likewise. */
export const DATA_LISTENER_SERVICES: readonly Pick<ServiceHttpRoutes, "routes">[] = [
  PipelineServiceRoutes,
  SourceServiceRoutes,
  IngestServiceRoutes,
  VectorServiceRoutes,
  VectorDataServiceRoutes,
  ActionsServiceRoutes,
];
