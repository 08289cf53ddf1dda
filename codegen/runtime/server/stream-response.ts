import type { DescMessage } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { errorEnvelope } from "../errors/error-envelope.js";
import type { HttpRoute, StreamFraming } from "../http-route.js";
import { ndjsonError, ndjsonMediaType, ndjsonMessage } from "../stream-framing/ndjson.js";
import { sseError, sseHeartbeat, sseMediaType, sseMessage } from "../stream-framing/sse.js";
import { encodeResponse } from "../transcode/encode-response.js";

const encoder = new TextEncoder();
const heartbeat = Symbol("heartbeat");

/**
 * The framing of one response: the method's declared framing, unless the client's `Accept` asks
 * for the other one explicitly (a CLI reading NDJSON from an SSE route, say). A route whose stream
 * folds its failure into a last message (`streamErrorEvent`) is served only in its declared
 * framing, whatever `Accept` says: the other framing's error frame is no message of the stream,
 * and a client that asked for the other framing still reads the declared one by its Content-Type
 * rather than being refused with a 406 it would have to handle.
 */
export function negotiateFraming(route: HttpRoute, accept: string | null): StreamFraming {
  const declared = route.streamFraming ?? "ndjson";
  if (route.streamErrorEvent !== undefined) return declared;
  const wanted = (accept ?? "").toLowerCase();
  const takes = (mediaType: string) => wanted.includes(mediaType);
  if (declared === "sse" && takes(ndjsonMediaType) && !takes(sseMediaType)) return "ndjson";
  if (declared === "ndjson" && takes(sseMediaType) && !takes(ndjsonMediaType)) return "sse";
  return declared;
}

/**
 * Writes a server stream on an HTTP route: one frame per message, flushed as it comes, an SSE
 * comment every `heartbeatMs` while the stream is idle (so proxies and load balancers keep the
 * connection), and a final error frame when the stream fails after its status line was sent. A
 * stream whose route names a `streamErrorEvent` does not fail there: the stream error folder
 * (stream-error-folding.ts) already turned the failure into a last message of the stream.
 */
export interface StreamResponseParts {
  readonly route: HttpRoute;
  readonly output: DescMessage;
  readonly framing: StreamFraming;
  /** The stream's first result, already awaited, then the rest of it. */
  readonly first: IteratorResult<unknown>;
  readonly rest: AsyncIterator<unknown>;
  readonly responseHeader: Headers;
  readonly heartbeatMs: number;
  /** The plane's error normaliser, for the final error frame. */
  readonly normalize: (error: unknown) => ConnectError;
}

export function streamResponse({
  route,
  output,
  framing,
  first,
  rest,
  responseHeader,
  heartbeatMs,
  normalize,
}: StreamResponseParts): { status: number; header: Headers; body: AsyncIterable<Uint8Array> } {
  const sse = framing === "sse";
  const header = new Headers(responseHeader);
  header.set("content-type", sse ? sseMediaType : ndjsonMediaType);
  header.set("cache-control", "no-cache");
  // Proxies such as nginx would otherwise buffer the stream and deliver it all at the end.
  header.set("x-accel-buffering", "no");
  const frame = (message: unknown) => {
    const json = encodeResponse(output, route, message as never);
    return encoder.encode(sse ? sseMessage(json) : ndjsonMessage(json));
  };
  async function* frames(): AsyncGenerator<Uint8Array> {
    try {
      if (first.done) return;
      yield frame(first.value);
      let pending: Promise<IteratorResult<unknown>> | undefined;
      for (;;) {
        pending ??= rest.next();
        const next = sse && heartbeatMs > 0 ? await raceHeartbeat(pending, heartbeatMs) : await pending;
        if (next === heartbeat) {
          yield encoder.encode(sseHeartbeat);
          continue;
        }
        pending = undefined;
        if (next.done) return;
        yield frame(next.value);
      }
    } catch (error) {
      const { body } = errorEnvelope(normalize(error));
      yield encoder.encode(sse ? sseError(body) : ndjsonError(body));
    } finally {
      // A client that goes away ends the implementation's iteration too.
      await rest.return?.();
    }
  }
  return { status: 200, header, body: frames() };
}

async function raceHeartbeat<T>(next: Promise<T>, ms: number): Promise<T | typeof heartbeat> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = new Promise<typeof heartbeat>((resolve) => (timer = setTimeout(() => resolve(heartbeat), ms)));
  try {
    return await Promise.race([next, tick]);
  } finally {
    clearTimeout(timer);
  }
}
