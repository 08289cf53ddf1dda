import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HttpRoute, ServiceAccess } from "./http-route.js";

/** Everything the generated glue knows about one service. */
export interface ServiceBinding<S extends DescService = DescService> {
  readonly service: S;
  readonly routes: readonly HttpRoute[];
  readonly access: ServiceAccess;
}

/**
 * What generated `register<Service>` functions call. A transport implements it once and serves
 * every registered implementation over Connect, gRPC, gRPC-web and the HTTP routes.
 */
export interface ServiceRegistrar {
  register<S extends DescService>(binding: ServiceBinding<S>, implementation: Partial<ServiceImpl<S>>): void;
}
