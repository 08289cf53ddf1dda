import type { Server as Http1Server } from "node:http";
import type { Http2Server } from "node:http2";
import type { Socket } from "node:net";

/**
 * Every HTTP/2 connection opens with this preface (RFC 9113 §3.4). gRPC clients speak cleartext
 * HTTP/2 "with prior knowledge": they send it as their very first bytes, with no Upgrade dance.
 */
export const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface PrefaceDispatchOptions {
  readonly http1: Http1Server;
  readonly http2: Http2Server;
  /** A connection that has not shown which protocol it speaks by then is closed. */
  readonly timeoutMs: number;
}

/**
 * One port for HTTP/1.1 and cleartext HTTP/2: Node's `http2.createServer()` refuses HTTP/1.1
 * (`allowHTTP1` applies to TLS servers only, where ALPN decides), and browsers, curl and the
 * Connect/gRPC-web clients speak HTTP/1.1 while gRPC clients speak h2c. So a plain TCP server accepts
 * the socket, reads until the bytes either are the HTTP/2 preface or stop matching it, and hands the
 * socket to the right server with `emit("connection")`, the bytes read put back with `unshift`.
 *
 * The two servers take the socket over differently. The http2 session reads the socket's native
 * handle itself and first drains what sits in the stream buffer, so the socket must stay paused:
 * `resume()` would let the stream machinery consume the preface before nghttp2 sees it (the client
 * gets GOAWAY INTERNAL_ERROR). The HTTP/1.1 server listens to `data` events, so there the socket is
 * resumed to replay the buffered bytes.
 *
 * The preface can arrive split over several TCP reads (a client or proxy may flush
 * `PRI * HTTP/2.0\r\n` first): bytes are collected until there are 24, or until one differs.
 */
export function createPrefaceDispatcher(options: PrefaceDispatchOptions): (socket: Socket) => void {
  return (socket) => {
    let received: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), options.timeoutMs);
    const abandon = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const compared = Math.min(received.length, HTTP2_PREFACE.length);
      const isPrefacePrefix = received.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared));
      if (isPrefacePrefix && received.length < HTTP2_PREFACE.length) return;
      clearTimeout(timer);
      socket.off("data", onData).off("error", abandon).off("end", abandon);
      socket.pause();
      socket.unshift(received);
      if (isPrefacePrefix) {
        // An Http2Server's own sockets are not half-open: the session expects the socket to end
        // when the peer's does. Our TCP server allows half-open for the HTTP/1.1 side's sake.
        socket.allowHalfOpen = false;
        options.http2.emit("connection", socket);
      } else {
        options.http1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData).on("error", abandon).on("end", abandon);
  };
}
