import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";

type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

/** Calls one unary method through the interceptors with the call's context; answers its output. */
export type UnaryInvoker = (context: HandlerContext, input: Message) => Promise<Message>;

/** Where the implementation finds its call: a symbol property, which a spread of the request keeps. */
const callKey = Symbol("call");

interface CallOfRequest {
  readonly context: HandlerContext;
  /** The request the chain was entered with: while it is the one passed on, the context is unchanged. */
  request?: UnaryRequest;
}

type RequestWithCall = UnaryRequest & { readonly [callKey]?: CallOfRequest };

/**
 * The interceptor chain of one unary method, built once when the routes are served instead of on
 * every call (connect's `invokeUnaryImplementation` composes it per call); otherwise the same
 * call: the interceptors, first one outermost, see the request connect would give them, the
 * implementation gets the context with what they changed of the request merged in, its answer is
 * completed into a full message, and headers or trailers an interceptor answered with replace the
 * context's.
 *
 * The request carries its call under a symbol; interceptors pass it on by passing the request
 * on, or a spread copy of it (`{...request, message}`), as every interceptor of this project does.
 * While the request passed on is the one the chain was entered with, the implementation gets the
 * context itself: the call's signal is made only if something reads it (call-context.ts).
 */
export function createUnaryInvoker(spec: UnarySpec, interceptors: readonly Interceptor[]): UnaryInvoker {
  const { method } = spec;
  const service = method.parent;
  const output: DescMessage = method.output;

  const implementation = async (request: UnaryRequest | { stream: true }): Promise<UnaryResponse> => {
    const call = (request as RequestWithCall)[callKey];
    if (!call || request.stream) {
      throw new ConnectError("an interceptor passed on a request without its call", Code.Internal);
    }
    const { context } = call;
    const unary = request as UnaryRequest;
    const handlerContext =
      unary === call.request
        ? context
        : {
            ...context,
            service: unary.service,
            requestHeader: unary.header,
            signal: unary.signal,
            values: unary.contextValues,
          };
    const message = create(output, await spec.impl(unary.message as never, handlerContext));
    return {
      stream: false,
      message,
      method,
      service,
      header: context.responseHeader,
      trailer: context.responseTrailer,
    } as UnaryResponse;
  };
  // As connect's applyInterceptors: the first interceptor is the outermost.
  const next = interceptors.reduceRight<(request: UnaryRequest) => Promise<UnaryResponse>>(
    (inner, interceptor) => interceptor(inner as Parameters<Interceptor>[0]) as typeof inner,
    implementation,
  );

  return async (context, input) => {
    const call: CallOfRequest = { context };
    const request = {
      stream: false,
      message: input,
      method,
      requestMethod: context.requestMethod,
      url: context.url,
      // Read only when something asks for it: the signal is made then.
      get signal() {
        return context.signal;
      },
      header: context.requestHeader,
      service,
      contextValues: context.values,
      [callKey]: call,
    } as RequestWithCall;
    call.request = request;
    const answer = await next(request);
    copyHeaders(answer.header, context.responseHeader);
    copyHeaders(answer.trailer, context.responseTrailer);
    return answer.message;
  };
}

/** `to` made equal to `from`, unless they are the same object (connect's own rule). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  to.forEach((_, key) => to.delete(key));
  from.forEach((value, key) => to.set(key, value));
}
