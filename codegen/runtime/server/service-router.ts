import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  createConnectRouter,
  createServiceImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
  type MethodImpl,
  type ServiceImpl,
} from "@connectrpc/connect";
import type { UniversalHandlerFn } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { ServiceBinding, ServiceRegistrar } from "../service-registrar.js";
import { guardBinaryInput, refusalKey } from "./binary-input-guard.js";
import { createErrorNormalizer, refuseNulStrings } from "./edge-interceptors.js";
import { answerUnimplementedGrpc } from "./grpc-unimplemented.js";
import { createStreamErrorFolder } from "./stream-error-folding.js";
import type { NodeRequest, NodeResponse } from "./node-exchange.js";
import { createRestNodeHandler, type RestHandlerOptions, type RestRouteTarget } from "./rest-handler.js";

type NodeHandler = (request: NodeRequest, response: NodeResponse) => void;

export interface ServiceRouterOptions extends RestHandlerOptions {
  /** Run after the router's own edge (error normaliser, NUL refusal), on every protocol. */
  readonly interceptors?: Interceptor[];
}

/** A registrar that serves what was registered as one Node request handler. */
export interface ServiceRouter extends ServiceRegistrar {
  /** Every registered binding, for the transport's auth and documentation needs. */
  readonly bindings: readonly ServiceBinding[];
  /**
   * One handler for node:http and node:http2 servers: Connect (JSON and binary), gRPC and
   * gRPC-web by connect-es, and every HTTP route by the transcoding handler. A gRPC or gRPC-web
   * call of a method nobody serves is answered UNIMPLEMENTED the gRPC way (HTTP 200,
   * `grpc-status` 12). Builds the route matcher once; call it after every service is registered.
   */
  nodeHandler(): NodeHandler;
}

const DEFAULT_READ_MAX_BYTES = 16 * 1024 * 1024;

export function createServiceRouter(options: ServiceRouterOptions = {}): ServiceRouter {
  const registrations: { binding: ServiceBinding; implementation: Partial<ServiceImpl<DescService>> }[] = [];
  // The edge comes first on every protocol: whatever auth or a handler throws leaves through the
  // normaliser, and a NUL in a string is refused before anything reads the message.
  const edge = [createErrorNormalizer(options.onUnexpectedError), refuseNulStrings, ...(options.interceptors ?? [])];
  return {
    get bindings() {
      return registrations.map((r) => r.binding);
    },
    register<S extends DescService>(binding: ServiceBinding<S>, implementation: Partial<ServiceImpl<S>>) {
      registrations.push({ binding, implementation: implementation as Partial<ServiceImpl<DescService>> });
    },
    nodeHandler() {
      // Outside the normaliser: a stream that folds its failure into a last message folds the
      // normalised error (stream-error-folding.ts).
      const interceptors = [createStreamErrorFolder(registrations.map((r) => r.binding)), ...edge];
      const targets: RestRouteTarget[] = registrations.flatMap(({ binding, implementation }) => {
        const spec = createServiceImplSpec(binding.service, implementation);
        return binding.routes.map((route) => ({ route, spec: spec.methods[route.rpc]! }));
      });
      const rest = createRestNodeHandler(targets, { ...options, interceptors });
      const readMaxBytes = options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES;
      const common = {
        acceptCompression: [compressionGzip, compressionBrotli],
        readMaxBytes,
        // As the HTTP routes do: a field or enum name the server does not know is an error, never
        // silently dropped (a filter that cannot be read must not mean "no filter").
        jsonOptions: { ignoreUnknownFields: false },
        ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
      };
      const router = createConnectRouter({ ...common, interceptors });
      for (const { binding, implementation } of registrations) router.service(binding.service, implementation);
      const refusals = refusalHandlers(router, common);
      const handlers = new Map<string, UniversalHandlerFn>(
        router.handlers.map((handler) => [
          handler.requestPath,
          guardBinaryInput(handler, refusals.get(handler.requestPath)!, common),
        ]),
      );
      const served = new Set(registrations.map(({ binding }) => binding.service.typeName));
      return (request, response) => {
        const handler = handlers.get((request.url ?? "").split("?", 1)[0]!);
        // gRPC clients read the status from the trailers, and take a 404 for a broken transport.
        if (!handler && answerUnimplementedGrpc(request, response, served)) return;
        // The HTTP routes are served on node's own request and response (rest-handler.ts).
        if (!handler) return rest(request, response);
        handler(universalRequestFromNodeRequest(request, response, undefined, undefined))
          .then((answer) => universalResponseToNodeResponse(answer, response))
          .catch(() => {
            // The response is half written (a client went away mid-stream): nothing to send.
            response.destroy();
          });
      };
    },
  };
}

/**
 * For each method, a handler on the same protocols whose implementation only throws the refusal
 * the binary input guard put in the context (see binary-input-guard.ts).
 */
function refusalHandlers(
  router: ConnectRouter,
  common: Parameters<typeof createConnectRouter>[0],
): Map<string, UniversalHandlerFn> {
  const refusals = createConnectRouter(common);
  for (const handler of router.handlers) refusals.rpc(handler.method, refuse(handler.method));
  return new Map(refusals.handlers.map((handler) => [handler.requestPath, handler]));
}

function refuse(method: DescMethod): MethodImpl<DescMethod> {
  const reason = (context: HandlerContext) => context.values.get(refusalKey) ?? new Error("refusal without a reason");
  if (method.methodKind === "server_streaming") {
    // eslint-disable-next-line require-yield -- it only refuses
    return async function* (_request: unknown, context: HandlerContext) {
      throw reason(context);
    } as unknown as MethodImpl<DescMethod>;
  }
  return (async (_request: unknown, context: HandlerContext) => {
    throw reason(context);
  }) as unknown as MethodImpl<DescMethod>;
}
