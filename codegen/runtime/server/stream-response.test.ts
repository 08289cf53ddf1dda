import { create } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { HttpRoute } from "../http-route.js";
import { parsePathTemplate } from "../path-template/index.js";
import { toApiError } from "./normalize-error.js";
import { negotiateFraming, streamResponse, type StreamResponseParts } from "./stream-response.js";

describe("negotiateFraming", () => {
  it.each([
    ["sse", null, "sse"],
    ["sse", "*/*", "sse"],
    ["sse", "text/event-stream", "sse"],
    ["sse", "application/x-ndjson", "ndjson"],
    ["sse", "application/x-ndjson, text/event-stream", "sse"],
    ["ndjson", "text/event-stream", "sse"],
    ["ndjson", "application/json", "ndjson"],
  ] as const)("%s with Accept %s gives %s", (declared, accept, expected) => {
    expect(negotiateFraming({ ...route, streamFraming: declared }, accept)).toBe(expected);
  });

  it.each(["text/event-stream", "application/x-ndjson", null])(
    "serves a route that folds its failures in its declared framing only (Accept %s)",
    (accept) => {
      const folding = { ...route, streamFraming: "ndjson", streamErrorEvent: "failed.error" } as const;
      expect(negotiateFraming(folding, accept)).toBe("ndjson");
    },
  );
});

const route: HttpRoute = {
  rpc: "watch",
  httpMethod: "GET",
  template: parsePathTemplate("/v1/watch"),
  body: "",
  responseBody: "",
  queryFields: [],
  streamFraming: "sse",
  additionalBinding: false,
};
const message = (n: number) => create(StructSchema, { fields: { n: { kind: { case: "numberValue", value: n } } } });

async function read(body: AsyncIterable<Uint8Array>, limit = Infinity): Promise<string[]> {
  const frames: string[] = [];
  for await (const chunk of body) {
    frames.push(new TextDecoder().decode(chunk));
    if (frames.length >= limit) break;
  }
  return frames;
}

const normalize = (error: unknown) => toApiError(error, "req-1");
const parts = (
  framing: StreamResponseParts["framing"],
  first: IteratorResult<unknown>,
  rest: AsyncIterator<unknown>,
  heartbeatMs = 0,
  responseHeader = new Headers(),
): StreamResponseParts => ({
  route,
  output: StructSchema,
  framing,
  first,
  rest,
  responseHeader,
  heartbeatMs,
  normalize,
});

describe("streamResponse", () => {
  it("sends a comment while the stream is idle, then the next message", async () => {
    async function* slow() {
      await new Promise((resolve) => setTimeout(resolve, 60));
      yield message(2);
    }
    const rest = slow();
    const response = streamResponse(parts("sse", { done: false, value: message(1) }, rest, 10));
    const frames = await read(response.body!);
    expect(frames[0]).toBe('data: {"n":1}\n\n');
    expect(frames.slice(1, -1).every((f) => f === ": keep-alive\n\n")).toBe(true);
    expect(frames.length).toBeGreaterThan(2);
    expect(frames.at(-1)).toBe('data: {"n":2}\n\n');
  });

  it("ends the implementation's iteration when the client stops reading", async () => {
    let finished = false;
    async function* endless() {
      try {
        for (let n = 2; ; n++) yield message(n);
      } finally {
        finished = true;
      }
    }
    const rest = endless();
    const response = streamResponse(parts("ndjson", { done: false, value: message(1) }, rest));
    expect(await read(response.body!, 3)).toEqual(['{"n":1}\n', '{"n":2}\n', '{"n":3}\n']);
    expect(finished).toBe(true);
  });

  it("writes the declared framing's headers", () => {
    const response = streamResponse(
      parts(
        "sse",
        { done: true, value: undefined },
        (async function* () {})(),
        0,
        new Headers({ "x-request-id": "r1" }),
      ),
    );
    expect(Object.fromEntries(response.header!)).toEqual({
      "cache-control": "no-cache",
      "content-type": "text/event-stream",
      "x-accel-buffering": "no",
      "x-request-id": "r1",
    });
  });

  it("ends a failed stream with the normalised error: an unexpected one says only internal and the request id", async () => {
    // eslint-disable-next-line require-yield -- it only fails
    async function* failing(): AsyncGenerator<never> {
      throw new Error("Failed query: select 1\nparams: secret-value");
    }
    const response = streamResponse(parts("ndjson", { done: false, value: message(1) }, failing()));
    const frames = await read(response.body!);
    expect(frames).toEqual([
      '{"n":1}\n',
      '{"error":{"code":"internal","message":"internal error (request id req-1)"}}\n',
    ]);
  });
});
