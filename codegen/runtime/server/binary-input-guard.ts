import { fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createContextKey, createContextValues } from "@connectrpc/connect";
import {
  createAsyncIterable,
  type Compression,
  type UniversalHandler,
  type UniversalHandlerFn,
  type UniversalServerRequest,
} from "@connectrpc/connect/protocol";
import { parseContentType as parseConnectType } from "@connectrpc/connect/protocol-connect";
import { parseContentType as parseGrpcType } from "@connectrpc/connect/protocol-grpc";
import { parseContentType as parseGrpcWebType } from "@connectrpc/connect/protocol-grpc-web";

/**
 * A binary request message that does not parse is the caller's mistake, yet connect-es reports it
 * as INTERNAL ("parse binary: …"), and before any interceptor runs. The guard reads the one
 * message of a unary or server-streaming call first (decompressed as the request says), parses it,
 * and hands a message that does not parse to a refusal handler: the same protocols, answering
 * INVALID_ARGUMENT in each protocol's own error form. JSON messages need no guard (connect-es
 * already answers INVALID_ARGUMENT for them); client streams are left to connect-es.
 */
export const refusalKey = createContextKey<ConnectError | undefined>(undefined, {
  description: "why the request message was refused",
});

/** How a binary request carries its message. */
type Framing =
  | { readonly kind: "body"; readonly encoding: string | null }
  | { readonly kind: "query" }
  | { readonly kind: "envelope"; readonly encoding: string | null };

export interface BinaryInputGuardOptions {
  readonly readMaxBytes: number;
  readonly acceptCompression: readonly Compression[];
}

/**
 * Wraps a router's handler. `refusal` serves the same method with an implementation that throws
 * `refusalKey`'s error (see createRefusalImplementation).
 */
export function guardBinaryInput(
  handler: UniversalHandler,
  refusal: UniversalHandlerFn,
  options: BinaryInputGuardOptions,
): UniversalHandlerFn {
  const singleInput = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
  if (!singleInput) return handler;
  const input = handler.method.input;
  return async (request) => {
    const framing = framingOf(request);
    if (!framing) return handler(request);
    if (framing.kind === "query") {
      const problem = await queryMessageProblem(request.url, input, options);
      return problem ? refusal(refusalRequest(request, framing, problem)) : handler(request);
    }
    const read = await readBody(request, options.readMaxBytes + 5);
    // Over the limit: connect-es refuses it with its own RESOURCE_EXHAUSTED as it reads on.
    if (read.overflow) return handler({ ...request, body: read.body });
    const problem = await bodyMessageProblem(read.bytes, framing, input, options);
    if (problem) return refusal(refusalRequest(request, framing, problem));
    return handler({ ...request, body: createAsyncIterable([read.bytes]) });
  };
}

function framingOf(request: UniversalServerRequest): Framing | undefined {
  if (request.method === "GET") {
    return new URL(request.url).searchParams.get("encoding") === "proto" ? { kind: "query" } : undefined;
  }
  const contentType = request.header.get("content-type");
  const connect = parseConnectType(contentType);
  if (connect?.binary) {
    return connect.stream
      ? { kind: "envelope", encoding: request.header.get("connect-content-encoding") }
      : { kind: "body", encoding: request.header.get("content-encoding") };
  }
  const grpc = parseGrpcType(contentType) ?? parseGrpcWebType(contentType);
  if (grpc?.binary && !("text" in grpc && grpc.text))
    return { kind: "envelope", encoding: request.header.get("grpc-encoding") };
  return undefined;
}

async function bodyMessageProblem(
  bytes: Uint8Array,
  framing: Framing,
  input: DescMessage,
  options: BinaryInputGuardOptions,
): Promise<string | undefined> {
  if (framing.kind === "body") return messageProblem(input, await decompressed(bytes, framing.encoding, options));
  // One envelope: flags, a 32-bit length, the message. Anything else is for connect-es to judge.
  if (framing.kind !== "envelope" || bytes.byteLength < 5) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = view.getUint8(0);
  const length = view.getUint32(1);
  if (5 + length !== bytes.byteLength || (flags & ~1) !== 0) return undefined;
  const data = bytes.subarray(5);
  return messageProblem(input, flags & 1 ? await decompressed(data, framing.encoding, options) : data);
}

async function queryMessageProblem(
  url: string,
  input: DescMessage,
  options: BinaryInputGuardOptions,
): Promise<string | undefined> {
  const query = new URL(url).searchParams;
  const message = query.get("message") ?? "";
  const bytes = query.get("base64") === "1" ? base64Decode(message) : new TextEncoder().encode(message);
  return messageProblem(input, await decompressed(bytes, query.get("compression"), options));
}

/** The bytes as sent, uncompressed; undefined for an encoding the server does not offer (connect-es answers that). */
async function decompressed(
  bytes: Uint8Array,
  encoding: string | null,
  options: BinaryInputGuardOptions,
): Promise<Uint8Array | undefined> {
  if (encoding === null || encoding === "" || encoding === "identity") return bytes;
  const compression = options.acceptCompression.find((c) => c.name === encoding);
  if (!compression) return undefined;
  try {
    return await compression.decompress(bytes, options.readMaxBytes);
  } catch {
    return undefined;
  }
}

function messageProblem(input: DescMessage, bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  try {
    fromBinary(input, bytes);
    return undefined;
  } catch (error) {
    return `the request message is not a valid binary ${input.typeName}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The request with an empty message, which parses, and the refusal in its context values. */
function refusalRequest(request: UniversalServerRequest, framing: Framing, problem: string): UniversalServerRequest {
  const contextValues = createContextValues().set(refusalKey, new ConnectError(problem, Code.InvalidArgument));
  if (framing.kind === "query") {
    const url = new URL(request.url);
    url.searchParams.set("message", "");
    url.searchParams.delete("compression");
    return { ...request, url: url.toString(), contextValues };
  }
  const header = new Headers(request.header);
  header.delete("content-encoding");
  header.delete("content-length");
  const body = framing.kind === "body" ? new Uint8Array(0) : new Uint8Array(5);
  return { ...request, header, body: createAsyncIterable([body]), contextValues };
}

interface ReadBody {
  readonly overflow: false;
  readonly bytes: Uint8Array;
}
interface OverflowingBody {
  readonly overflow: true;
  /** What was read, then the rest as it comes. */
  readonly body: AsyncIterable<Uint8Array>;
}

async function readBody(request: UniversalServerRequest, limit: number): Promise<ReadBody | OverflowingBody> {
  const body = request.body;
  if (!(typeof body === "object" && body !== null && Symbol.asyncIterator in body))
    return { overflow: false, bytes: new Uint8Array(0) };
  const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    total += next.value.byteLength;
    if (total > limit) return { overflow: true, body: chain(chunks, iterator) };
  }
  return { overflow: false, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
}

async function* chain(first: readonly Uint8Array[], rest: AsyncIterator<Uint8Array>): AsyncIterable<Uint8Array> {
  yield* first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}
