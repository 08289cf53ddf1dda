import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HttpRoute, ServiceAccess } from "./http-route.js";

/** Everything the generated glue knows about one service. */
export interface ServiceBinding<S extends DescService = DescService> {
  readonly service: S;
  readonly routes: readonly HttpRoute[];
  readonly access: ServiceAccess;
  /**
   * The server streams whose failures after the first message are folded into one last message
   * of the stream (platform.api.v1.stream_error_event): method local name -> proto field path
   * (`failed.error`). The registrar applies it on every protocol; absent when no method has one.
   */
  readonly streamErrorEvents?: Readonly<Record<string, string>>;
}

/**
 * What generated `register<Service>` functions call. A transport implements it once and serves
 * every registered implementation over Connect, gRPC, gRPC-web and the HTTP routes.
 */
export interface ServiceRegistrar {
  register<S extends DescService>(binding: ServiceBinding<S>, implementation: Partial<ServiceImpl<S>>): void;
}
