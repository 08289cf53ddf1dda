import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrefaceDispatcher, HTTP2_PREFACE } from "./preface-dispatch.js";

const EMPTY_SETTINGS_FRAME = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const SETTINGS_TYPE = 4;

let tcpServer: net.Server;
let port: number;
/** Called with the next server-side socket, once: lets a test see what the server has read. */
const acceptObservers: ((socket: net.Socket) => void)[] = [];
beforeAll(async () => {
  const http1 = http.createServer((_req, res) => res.end("h1"));
  const h2 = http2.createServer((_req, res) => res.end("h2"));
  tcpServer = net.createServer({ allowHalfOpen: true }, createPrefaceDispatcher({ http1, http2: h2, timeoutMs: 1000 }));
  tcpServer.on("connection", (socket: net.Socket) => acceptObservers.shift()?.(socket));
  await new Promise<void>((resolve) => tcpServer.listen(0, "127.0.0.1", resolve));
  port = (tcpServer.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => tcpServer.close(() => resolve())));

/**
 * Writes each part once the server has read the ones before (so each is its own TCP read), then
 * collects the answer until `enough` or close.
 */
async function exchange(parts: (string | Buffer)[], enough: (answer: Buffer) => boolean) {
  const accepted = new Promise<net.Socket>((resolve) => acceptObservers.push(resolve));
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const server = await accepted;
  // Counts the bytes the server has read, beside the dispatcher, until the last part is written
  // (then the socket belongs to the HTTP server it was handed to).
  let serverRead = 0;
  let readEnough: () => void = () => {};
  const count = (chunk: Buffer) => {
    serverRead += chunk.length;
    readEnough();
  };
  server.on("data", count);
  let answer = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const done = new Promise<void>((resolve) => {
    socket.on("data", (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (enough(answer)) resolve();
    });
    socket.on("close", () => resolve()).on("error", () => resolve());
  });
  let written = 0;
  for (const [index, part] of parts.entries()) {
    const last = index === parts.length - 1;
    if (last) server.off("data", count);
    socket.write(part);
    written += Buffer.byteLength(part);
    if (last) break;
    await new Promise<void>((resolve) => {
      readEnough = () => {
        if (serverRead >= written) resolve();
      };
      readEnough();
    });
  }
  server.off("data", count); // when there was no part to write
  await done;
  socket.destroy();
  await closed;
  return answer;
}

describe("createPrefaceDispatcher", () => {
  it("hands a preface split over three reads to the HTTP/2 server", async () => {
    const preface = HTTP2_PREFACE;
    const answer = await exchange(
      [preface.subarray(0, 5), preface.subarray(5, 16), Buffer.concat([preface.subarray(16), EMPTY_SETTINGS_FRAME])],
      (a) => a.length >= 9,
    );
    expect(answer[3]).toBe(SETTINGS_TYPE);
  });

  it("hands bytes that stop matching the preface part-way to the HTTP/1.1 server", async () => {
    // Split where a dispatcher deciding on "starts like the preface" would pick HTTP/2 too early.
    const answer = await exchange(["PRI * HTTP/", "1.1\r\nHost: x\r\n\r\n"], (a) => a.includes("\r\n\r\n"));
    expect(answer.toString("latin1")).toMatch(/^HTTP\/1\.1 /);
  });

  it("does not wait for 24 bytes when an HTTP/1.x request is shorter", async () => {
    const answer = await exchange(["GET / HTTP/1.0\r\n\r\n"], (a) => a.toString().endsWith("h1"));
    expect(answer.toString("latin1")).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*h1$/);
  });

  it("closes a connection that stays silent, or ends before saying which protocol", async () => {
    const began = Date.now();
    expect((await exchange([], () => false)).length).toBe(0);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);

    const ended = Date.now();
    const socket = net.connect(port, "127.0.0.1", () => socket.end("PRI * HT"));
    await new Promise((resolve) => socket.on("close", resolve).on("error", resolve).resume());
    expect(Date.now() - ended).toBeLessThan(500);
  });
});
