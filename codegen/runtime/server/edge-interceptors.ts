import type { DescMessage } from "@bufbuild/protobuf";
import type { ConnectError, Interceptor, StreamRequest, UnaryRequest } from "@connectrpc/connect";
import { refuseNulInMessage } from "./nul-character.js";
import { requestIdOf, toApiError, type UnexpectedErrorHandler } from "./normalize-error.js";

/**
 * The outermost interceptor of every RPC plane but the stream error folder, which folds what it
 * answers (stream-error-folding.ts): whatever a call throws, before its first message or in the
 * middle of a stream, leaves through the one normaliser. It runs for Connect, gRPC,
 * gRPC-web and the HTTP routes alike, since they all invoke implementations through the same
 * interceptor chain.
 */
export function createErrorNormalizer(onUnexpected: UnexpectedErrorHandler = () => {}): Interceptor {
  return (next) => async (request) => {
    try {
      const response = await next(request);
      if (!response.stream) return response;
      return {
        ...response,
        message: normalizeStream(response.message, (error) => normalize(error, request, onUnexpected)),
      };
    } catch (error) {
      throw normalize(error, request, onUnexpected);
    }
  };
}

/**
 * One error of a call, normalised. The request id is looked up only when there is an error to
 * answer, and nothing is made per call for the errors that do not come: the server runs through a
 * loader that names every closure assigned a name as it is made, at a cost on every call.
 */
function normalize(error: unknown, request: UnaryRequest | StreamRequest, onUnexpected: UnexpectedErrorHandler) {
  const requestId = requestIdOf(request.header);
  return toApiError(error, requestId, (unexpected) =>
    onUnexpected(unexpected, { procedure: `/${request.service.typeName}/${request.method.name}`, requestId }),
  );
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
