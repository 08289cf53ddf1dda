import { fromJson, type DescField, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ServiceBinding } from "../service-registrar.js";

/**
 * Folds the failure of a server stream into one last message of the stream, for the methods
 * whose binding names a stream error event (platform.api.v1.stream_error_event): once a stream
 * has sent its first message, an error ends it with a message whose field at the event's path
 * holds the error's message, and the call ends successfully. Every protocol (Connect, gRPC,
 * gRPC-web and the HTTP routes) invokes implementations through the same interceptor chain, so
 * the stream ends the same way on each. An error before the first message passes unchanged: no
 * stream has started, and the caller gets an ordinary error answer.
 *
 * It must run outside the error normaliser: the message folded in is the normalised one, so an
 * unexpected error is logged once and its text never reaches the caller.
 */
export function createStreamErrorFolder(bindings: readonly ServiceBinding[]): Interceptor {
  const folders = new Map<string, (message: string) => unknown>();
  for (const binding of bindings) {
    for (const [localName, path] of Object.entries(binding.streamErrorEvents ?? {})) {
      const method = binding.service.methods.find((m) => m.localName === localName);
      if (!method || method.methodKind !== "server_streaming") {
        throw new Error(`${binding.service.typeName}: stream error event of "${localName}", which is no server stream`);
      }
      folders.set(`${binding.service.typeName}/${method.name}`, errorEventBuilder(method.output, path));
    }
  }
  return (next) => async (request) => {
    const fold = folders.get(`${request.service.typeName}/${request.method.name}`);
    const response = await next(request);
    if (!fold || !response.stream) return response;
    return { ...response, message: foldFailure(response.message, fold) };
  };
}

async function* foldFailure<T>(messages: AsyncIterable<T>, fold: (message: string) => unknown): AsyncIterable<T> {
  let started = false;
  try {
    for await (const message of messages) {
      started = true;
      yield message;
    }
  } catch (error) {
    if (!started) throw error;
    // The normaliser inside made every error a ConnectError whose message is fit to show.
    yield fold(ConnectError.from(error).rawMessage) as T;
  }
}

/**
 * Resolves a proto field path (`failed.error`) in the stream's message once, at registration,
 * and returns what builds the folded message: the path's string field set, everything else at
 * its default, the oneof member on the way selected by being set.
 */
function errorEventBuilder(output: DescMessage, path: string): (message: string) => unknown {
  const fields: DescField[] = [];
  let message: DescMessage | undefined = output;
  for (const name of path.split(".")) {
    const field: DescField | undefined = message?.fields.find((f) => f.name === name);
    if (!field) throw new Error(`${output.typeName}: stream error event path "${path}" names no field`);
    fields.push(field);
    message = field.fieldKind === "message" ? field.message : undefined;
  }
  return (text) => {
    let json: JsonObject | string = text;
    for (const field of [...fields].reverse()) json = { [field.jsonName]: json };
    return fromJson(output, json);
  };
}
