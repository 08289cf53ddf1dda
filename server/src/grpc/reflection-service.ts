import { create, fromBinary, toBinary, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
  type ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { createReflectionIndex, type ReflectionIndex } from "./reflection-index.js";

/** gRPC status codes carried in an ErrorResponse (the protocol sends numbers, not names). */
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * The server reflection protocol, v1 and v1alpha, over the services `served()` returns. The index
 * is built at the first call, when every service is registered, and kept: the served services do
 * not change while a server runs.
 */
export function createServerReflection(served: () => readonly DescService[]): {
  v1: ServiceImpl<typeof ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
} {
  let index: ReflectionIndex | undefined;
  const answer = (request: ServerReflectionRequest): ServerReflectionResponse => {
    index ??= createReflectionIndex(served());
    return create(ServerReflectionResponseSchema, {
      validHost: request.host,
      originalRequest: request,
      messageResponse: respond(index, request),
    });
  };
  return {
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) yield answer(request);
      },
    },
    // v1alpha is v1 under another package name, field for field: each message crosses over through
    // its wire form, so one implementation answers both.
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          const asV1 = fromBinary(
            ServerReflectionRequestSchema,
            toBinary(v1alpha.ServerReflectionRequestSchema, request),
          );
          yield fromBinary(
            v1alpha.ServerReflectionResponseSchema,
            toBinary(ServerReflectionResponseSchema, answer(asV1)),
          );
        }
      },
    },
  };
}

type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

function respond(index: ReflectionIndex, request: ServerReflectionRequest): Answer {
  const asked = request.messageRequest;
  switch (asked.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: index.serviceNames.map((name) => ({ name })) } };
    case "fileByFilename":
      return files(index.fileByName(asked.value), `file "${asked.value}" is not known to this server`);
    case "fileContainingSymbol":
      return files(index.fileContainingSymbol(asked.value), `symbol "${asked.value}" is not known to this server`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = asked.value;
      return files(
        index.fileContainingExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of "${containingType}" is not known to this server`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbersOf(asked.value);
      if (!numbers) return error(NOT_FOUND, `message type "${asked.value}" is not known to this server`);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: asked.value.replace(/^\./, ""), extensionNumber: numbers },
      };
    }
    case undefined:
      return error(
        INVALID_ARGUMENT,
        "message_request: set one of list_services, file_by_filename, file_containing_symbol, file_containing_extension, all_extension_numbers_of_type",
      );
  }
}

function files(found: Uint8Array[] | undefined, notFound: string): Answer {
  return found ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: found } } : error(NOT_FOUND, notFound);
}

function error(code: number, message: string): Answer {
  return { case: "errorResponse", value: { errorCode: code, errorMessage: message } };
}
