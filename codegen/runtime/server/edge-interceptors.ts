import type { DescMessage } from "@bufbuild/protobuf";
import type { ConnectError, Interceptor } from "@connectrpc/connect";
import { refuseNulInMessage } from "./nul-character.js";
import { requestIdOf, toApiError, type UnexpectedErrorHandler } from "./normalize-error.js";

/**
 * The outermost interceptor of every RPC plane: whatever a call throws, before its first message
 * or in the middle of a stream, leaves through the one normaliser. It runs for Connect, gRPC,
 * gRPC-web and the HTTP routes alike, since they all invoke implementations through the same
 * interceptor chain.
 */
export function createErrorNormalizer(onUnexpected: UnexpectedErrorHandler = () => {}): Interceptor {
  return (next) => async (request) => {
    // The request id is looked up only when there is an error to answer.
    const normalize = (error: unknown) => {
      const requestId = requestIdOf(request.header);
      return toApiError(error, requestId, (unexpected) =>
        onUnexpected(unexpected, { procedure: `/${request.service.typeName}/${request.method.name}`, requestId }),
      );
    };
    try {
      const response = await next(request);
      if (!response.stream) return response;
      return { ...response, message: normalizeStream(response.message, normalize) };
    } catch (error) {
      throw normalize(error);
    }
  };
}

async function* normalizeStream<T>(
  messages: AsyncIterable<T>,
  normalize: (error: unknown) => ConnectError,
): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    throw normalize(error);
  }
}

/**
 * Refuses a request message with U+0000 in any string as INVALID_ARGUMENT naming the field,
 * before authentication or the handler sees it (see nul-character.ts); the error normaliser
 * outside it answers the refusal, as the REST planes' does theirs.
 */
export const refuseNulStrings: Interceptor = (next) => async (request) => {
  const input = request.method.input;
  if (!request.stream) {
    refuseNulInMessage(input, request.message);
    return next(request);
  }
  return next({ ...request, message: checkedStream(input, request.message) });
};

async function* checkedStream<T extends object>(input: DescMessage, messages: AsyncIterable<T>): AsyncIterable<T> {
  for await (const message of messages) {
    refuseNulInMessage(input, message);
    yield message;
  }
}
