import type { DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import {
  connectNodeAdapter,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { ServiceBinding, ServiceRegistrar } from "../service-registrar.js";
import { createRestHandler, type RestHandlerOptions, type RestRouteTarget } from "./rest-handler.js";

type NodeHandler = ReturnType<typeof connectNodeAdapter>;

export interface ServiceRouterOptions extends RestHandlerOptions {
  readonly interceptors?: Interceptor[];
}

/** A registrar that serves what was registered as one Node request handler. */
export interface ServiceRouter extends ServiceRegistrar {
  /** Every registered binding, for the transport's auth and documentation needs. */
  readonly bindings: readonly ServiceBinding[];
  /**
   * One handler for node:http and node:http2 servers: Connect (JSON and binary), gRPC and
   * gRPC-web by connect-node, and every HTTP route by the transcoding handler. Builds the route
   * matcher once; call it after every service is registered.
   */
  nodeHandler(): NodeHandler;
}

export function createServiceRouter(options: ServiceRouterOptions = {}): ServiceRouter {
  const registrations: { binding: ServiceBinding; implementation: Partial<ServiceImpl<DescService>> }[] = [];
  return {
    get bindings() {
      return registrations.map((r) => r.binding);
    },
    register<S extends DescService>(binding: ServiceBinding<S>, implementation: Partial<ServiceImpl<S>>) {
      registrations.push({ binding, implementation: implementation as Partial<ServiceImpl<DescService>> });
    },
    nodeHandler() {
      const targets: RestRouteTarget[] = registrations.flatMap(({ binding, implementation }) => {
        const spec = createServiceImplSpec(binding.service, implementation);
        return binding.routes.map((route) => ({ route, spec: spec.methods[route.rpc]! }));
      });
      const rest = createRestHandler(targets, options);
      return connectNodeAdapter({
        routes(router) {
          for (const { binding, implementation } of registrations) router.service(binding.service, implementation);
        },
        ...(options.interceptors ? { interceptors: options.interceptors } : {}),
        ...(options.readMaxBytes !== undefined ? { readMaxBytes: options.readMaxBytes } : {}),
        ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
        fallback(request, response) {
          // The raw request target, not connect-node's parsed URL: the REST router must see the
          // path exactly as sent (`//x/y` and dot segments are not rewritten).
          const universal = { ...universalRequestFromNodeRequest(request, response, undefined, undefined), url: request.url ?? "/" };
          rest(universal)
            .then((answer) => universalResponseToNodeResponse(answer, response))
            .catch(() => {
              // The response is half written (a client went away mid-stream): nothing to send.
              response.destroy();
            });
        },
      });
    },
  };
}
