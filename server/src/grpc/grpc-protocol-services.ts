import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ServiceBinding } from "@platform/codegen/runtime";
import type { ServiceRouter } from "@platform/codegen/runtime/server";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { createHealthService, type HealthState } from "./health-service.js";
import { createServerReflection } from "./reflection-service.js";

/**
 * Serves server reflection (v1 and v1alpha) and health checking beside the API's services, so
 * gRPC tools describe and call the API with no local .proto file, and probes need no client
 * code. Call it after every API service is registered; the answers cover every service the router
 * serves, these included.
 *
 * They have no HTTP routes (they are gRPC protocols), and every method is public: the service
 * list and the descriptors are the published contract, and a probe carries no credential. The
 * auth interceptor lets them through by these access rules, as it does any public method.
 */
export function registerGrpcProtocolServices(router: ServiceRouter, health: HealthState): void {
  const served = () => router.bindings.map((binding) => binding.service);
  const reflection = createServerReflection(served);
  register(router, ServerReflection, reflection.v1);
  register(router, ServerReflectionV1alpha, reflection.v1alpha);
  register(router, Health, createHealthService(health, served));
}

function register<S extends DescService>(router: ServiceRouter, service: S, implementation: ServiceImpl<S>): void {
  const binding: ServiceBinding<S> = {
    service,
    routes: [],
    access: { organizationHeader: false, publicMethods: service.methods.map((m) => m.localName) },
  };
  router.register(binding, implementation);
}
