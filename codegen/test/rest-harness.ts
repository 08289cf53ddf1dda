import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  create,
  toJson,
  type DescMessage,
  type DescService,
  type JsonObject,
  type JsonValue,
  type Message,
} from "@bufbuild/protobuf";
import { createServiceImplSpec, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalHandlerFn } from "@connectrpc/connect/protocol";
import { expect } from "vitest";
import { createRestHandler, type RestHandlerOptions, type RestRouteTarget } from "../runtime/server/rest-handler.js";
import { buildServiceModel } from "../src/proto/binding-model.js";
import { createOptionReader } from "../src/proto/options.js";
import { compileProtos } from "./compile-proto.js";

/**
 * The harness of the transcoding conformance suite: compiles `fixtures/conformance.proto` with
 * real buf, builds the HTTP routes with the generator's own binding model, serves them with the
 * REST handler over an implementation that records every request message, and drives the handler
 * with plain UniversalServerRequest objects.
 */

const fixture = join(dirname(fileURLToPath(import.meta.url)), "fixtures/conformance.proto");
const serviceName = "conformance.v1.ConformanceService";

/** What the implementation does with one request: return a response (init shape) or throw. */
export type Reply = (request: Message, context: HandlerContext) => unknown;
/** What a server stream yields; an Error in the list is thrown at that point. */
export type StreamReply = (request: Message) => readonly unknown[];

export interface Received {
  readonly rpc: string;
  readonly message: Message;
}

export interface Conformance {
  readonly service: DescService;
  /** The requests the implementation received, oldest first; `reset()` clears it. */
  readonly received: Received[];
  /** Sets what the implementation answers until the next `reset()`. */
  reply: Reply | undefined;
  stream: StreamReply | undefined;
  reset(): void;
  handler(options?: RestHandlerOptions): UniversalHandlerFn;
  message(typeName: string): DescMessage;
}

export async function loadConformance(): Promise<Conformance> {
  const compiled = await compileProtos({ "conformance/v1/conformance.proto": await readFile(fixture, "utf8") });
  const service = compiled.registry.getService(serviceName);
  if (!service) throw new Error(`${serviceName} not found`);
  const model = buildServiceModel(service, createOptionReader([...compiled.registry.files]));
  const state: Conformance = {
    service,
    received: [],
    reply: undefined,
    stream: undefined,
    reset() {
      state.received.length = 0;
      state.reply = undefined;
      state.stream = undefined;
    },
    handler: (options) => createRestHandler(targets, options),
    message(typeName) {
      const desc = compiled.registry.getMessage(typeName);
      if (!desc) throw new Error(`${typeName} not found`);
      return desc;
    },
  };
  const impl: Record<string, unknown> = {};
  for (const method of service.methods) {
    if (method.methodKind === "server_streaming") {
      impl[method.localName] = async function* (request: Message, _context: HandlerContext) {
        state.received.push({ rpc: method.localName, message: request });
        for (const item of state.stream?.(request) ?? []) {
          if (item instanceof Error) throw item;
          yield create(method.output, item as never);
        }
      };
    } else {
      impl[method.localName] = (request: Message, context: HandlerContext) => {
        state.received.push({ rpc: method.localName, message: request });
        const init = state.reply ? state.reply(request, context) : {};
        return create(method.output, init as never);
      };
    }
  }
  const spec = createServiceImplSpec(service, impl as Partial<ServiceImpl<DescService>>);
  const targets: RestRouteTarget[] = model.methods.flatMap((m) =>
    m.routes.map((route) => ({ route, spec: spec.methods[route.rpc]! })),
  );
  return state;
}

export interface HttpCall {
  readonly method: string;
  /** Path and query, sent as received (still percent-encoded). */
  readonly path: string;
  readonly body?: string | Uint8Array;
  readonly headers?: Record<string, string>;
}

export interface HttpAnswer {
  readonly status: number;
  readonly header: Headers;
  readonly text: string;
}

/** Sends one request through the handler and reads the whole answer. */
export async function send(handler: UniversalHandlerFn, call: HttpCall): Promise<HttpAnswer> {
  const bytes = typeof call.body === "string" ? new TextEncoder().encode(call.body) : (call.body ?? new Uint8Array(0));
  const header = new Headers(call.headers);
  if (call.body !== undefined && !header.has("content-type")) header.set("content-type", "application/json");
  const response = await handler({
    httpVersion: "1.1",
    url: `http://localhost${call.path}`,
    method: call.method,
    header,
    body: createAsyncIterable(bytes.byteLength > 0 ? [bytes] : []),
    signal: new AbortController().signal,
  });
  const chunks: Uint8Array[] = [];
  if (response.body !== undefined) for await (const chunk of response.body) chunks.push(chunk);
  return {
    status: response.status,
    header: new Headers(response.header),
    text: Buffer.concat(chunks).toString("utf8"),
  };
}

/** The proto3 JSON of a message with every implicit field, as the assertions compare it. */
export function messageJson(message: Message, schema: DescMessage): JsonObject {
  return toJson(schema, message, { alwaysEmitImplicit: true }) as JsonObject;
}

/**
 * One table row: a request, and EITHER the exact request message the implementation received
 * (`rpc` + `request`, the fields that differ from the empty message) OR the exact HTTP status and
 * error body (plus any headers that matter).
 */
export interface ConformanceCase {
  readonly name: string;
  readonly call: HttpCall;
  readonly reply?: Reply;
  readonly stream?: StreamReply;
  readonly options?: RestHandlerOptions;
  readonly rpc?: string;
  readonly request?: JsonObject;
  readonly status?: number;
  /** The exact error body; a RegExp message only where the text is V8's, not ours or protobuf-es'. */
  readonly error?: { code: string; message: string | RegExp };
  readonly json?: JsonValue;
  readonly text?: string;
  readonly headers?: Record<string, string>;
}

/** Runs one row and asserts everything it states. */
export async function runCase(conformance: Conformance, row: ConformanceCase): Promise<void> {
  conformance.reset();
  conformance.reply = row.reply;
  conformance.stream = row.stream;
  const answer = await send(conformance.handler(row.options), row.call);
  if (row.request !== undefined) {
    expect(answer.status, answer.text).toBe(200);
    expect(conformance.received.map((r) => r.rpc)).toEqual([row.rpc]);
    const method = conformance.service.methods.find((m) => m.localName === row.rpc)!;
    const received = conformance.received[0]!.message;
    const empty = messageJson(create(method.input), method.input);
    expect(messageJson(received, method.input)).toEqual({ ...empty, ...row.request });
  }
  if (row.status !== undefined) expect(answer.status, answer.text).toBe(row.status);
  if (row.error !== undefined) {
    const body = JSON.parse(answer.text) as { code: string; message: string };
    if (row.error.message instanceof RegExp) {
      expect(Object.keys(body).sort()).toEqual(["code", "message"]);
      expect(body.code).toBe(row.error.code);
      expect(body.message).toMatch(row.error.message);
    } else {
      expect(body).toEqual(row.error);
    }
    expect(answer.header.get("content-type")).toBe("application/json");
    if (row.reply === undefined && row.stream === undefined) {
      // Rejected input never reaches the implementation.
      expect(conformance.received).toEqual([]);
    }
  }
  if (row.json !== undefined) expect(JSON.parse(answer.text)).toEqual(row.json);
  if (row.text !== undefined) expect(answer.text).toBe(row.text);
  for (const [name, value] of Object.entries(row.headers ?? {})) {
    expect(answer.header.get(name), `header ${name}`).toBe(value);
  }
}

type Extra = Omit<Partial<ConformanceCase>, "name" | "call">;

/** A row whose request reaches `rpc` as exactly `request` (fields beyond the empty message). */
export function accepts(
  name: string,
  call: HttpCall,
  rpc: string,
  request: JsonObject,
  extra: Extra = {},
): ConformanceCase {
  return { name, call, rpc, request, ...extra };
}

/** A row answered with `status` and exactly the error body `{code, message}`. */
export function rejects(
  name: string,
  call: HttpCall,
  status: number,
  code: string,
  message: string | RegExp,
  extra: Extra = {},
): ConformanceCase {
  return { name, call, status, error: { code, message }, ...extra };
}

export const get = (path: string, headers?: Record<string, string>): HttpCall => ({
  method: "GET",
  path,
  ...(headers ? { headers } : {}),
});
export const withBody = (
  method: string,
  path: string,
  body: string | Uint8Array,
  headers?: Record<string, string>,
): HttpCall => ({
  method,
  path,
  body,
  ...(headers ? { headers } : {}),
});
