import * as net from "node:net";
import { ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Agent, request } from "undici";
import { afterAll, describe, expect, it, vi } from "vitest";
import { listenPlane } from "./listen-plane.js";
import { createLogger } from "../log/logger.js";
import { client, gates, port, signal, startPlane } from "./plane-fixture.js";
import type * as PrefaceDispatch from "./preface-dispatch.js";

/** Called with the next server-side socket the plane accepts, once: lets a test see what the server has read. */
const acceptObservers = vi.hoisted(() => [] as ((socket: net.Socket) => void)[]);
vi.mock("./preface-dispatch.js", async (importOriginal) => {
  const original = await importOriginal<typeof PrefaceDispatch>();
  return {
    ...original,
    createPrefaceDispatcher: (options: Parameters<typeof original.createPrefaceDispatcher>[0]) => {
      const dispatch = original.createPrefaceDispatcher(options);
      return (socket: net.Socket) => {
        dispatch(socket);
        for (const observe of acceptObservers.splice(0)) observe(socket);
      };
    },
  };
});

describe("graceful close", () => {
  afterAll(() => gates.stubbornRelease.resolve());

  it("lets an in-flight call finish and refuses new connections meanwhile", async () => {
    const { plane, logs } = await startPlane();
    gates.slowEntered = signal();
    const slowCall = client(createConnectTransport({ baseUrl: plane.url, httpVersion: "1.1" })).getThread({
      threadId: "slow",
    });
    await gates.slowEntered.promise;

    const closing = plane.close(5000);
    expect(plane.shutdownSignal.aborted).toBe(true);
    await expect(
      new Promise((resolve, reject) =>
        net.connect(port(plane.url), "127.0.0.1", () => resolve("connected")).on("error", reject),
      ),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect((await slowCall).threadId).toBe("slow");
    await closing;
    expect(logs.map((line) => line.msg)).toContain("closed");
    expect(logs.filter((line) => line.level !== "info")).toEqual([]);
  });

  it("answers readyz 'stopping' while draining, on a connection that began its request before", async () => {
    const { plane } = await startPlane();
    gates.slowEntered = signal();
    // The dispatcher reads the bytes first and hands them to the HTTP/1.1 parser before the
    // promise below lets the test go on: the request has begun when the plane starts closing.
    const requestRead = signal();
    acceptObservers.push((socket) => socket.once("data", () => requestRead.resolve()));
    const socket = net.connect(port(plane.url), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("GET /readyz HTTP/1.1\r\nHost: x\r\n");
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    await requestRead.promise;
    const slowCall = client(createConnectTransport({ baseUrl: plane.url, httpVersion: "1.1" })).getThread({
      threadId: "slow",
    });
    await gates.slowEntered.promise;
    const closing = plane.close(5000);
    socket.write("\r\n");
    await vi.waitFor(() => expect(answer).toContain('{"status":"stopping"}'));
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer.toLowerCase()).toContain("connection: close");
    await slowCall;
    await closing;
  });

  it.each([
    ["gRPC over HTTP/2", (url: string) => createGrpcTransport({ baseUrl: url })],
    ["Connect over HTTP/1.1", (url: string) => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ])("ends a running stream (%s) without waiting out the grace period", async (_name, transport) => {
    const { plane } = await startPlane();
    gates.streamEntered = signal();
    const events: string[] = [];
    const consumed = (async () => {
      for await (const event of client(transport(plane.url)).watchThread({ threadId: "t-1" }))
        events.push(event.event.case ?? "");
    })().then(
      () => "ended",
      (error: unknown) => `error: ${ConnectError.from(error).code}`,
    );
    await gates.streamEntered.promise;
    const began = Date.now();
    await plane.close(10_000);
    expect(await consumed).toBe("ended");
    expect(events).toEqual(["started"]);
    expect(Date.now() - began).toBeLessThan(3000);
  });

  it("cuts a stream that ignores the shutdown signal once the grace period is over", async () => {
    const { plane, logs } = await startPlane();
    gates.streamEntered = signal();
    const consumed = (async () => {
      for await (const _event of client(createGrpcTransport({ baseUrl: plane.url })).watchThread({
        threadId: "stubborn",
      }));
    })().then(
      () => "ended",
      () => "error",
    );
    await gates.streamEntered.promise;
    const began = Date.now();
    await plane.close(300);
    expect(Date.now() - began).toBeGreaterThanOrEqual(290);
    expect(await consumed).toBe("error");
    await vi.waitFor(() =>
      expect(logs.find((line) => line.msg === "request")).toMatchObject({
        route: "/platform.script.v1.ScriptService/WatchThread",
        aborted: true,
      }),
    );
    expect(
      logs.find((line) => line.level === "warn" && String(line.msg).startsWith("grace period over")),
    ).toMatchObject({ graceMs: 300, requests: 1 });
  });

  it("does not wait for idle keep-alive HTTP/1.1 connections or idle HTTP/2 sessions", async () => {
    const { plane } = await startPlane();
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      const response = await request(`${plane.url}/healthz`, { dispatcher: agent });
      await response.body.dump();
      await client(createGrpcTransport({ baseUrl: plane.url })).healthCheck({});
      const began = Date.now();
      await plane.close(10_000);
      expect(Date.now() - began).toBeLessThan(1000);
    } finally {
      await agent.close();
    }
  });

  it("rejects when the port is taken", async () => {
    const { plane } = await startPlane();
    const options = {
      name: "api",
      host: "127.0.0.1",
      port: port(plane.url),
      handler: () => {},
      corsOrigins: [],
      maxBodyBytes: 1,
      logger: createLogger(() => {}),
      isReady: () => true,
    };
    await expect(listenPlane(options)).rejects.toMatchObject({ code: "EADDRINUSE" });
    await plane.close();
  });

  it("returns the same promise when closed twice", async () => {
    const { plane } = await startPlane();
    expect(plane.close(100)).toBe(plane.close(100));
    await plane.close();
  });
});
