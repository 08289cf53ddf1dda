import { once } from "node:events";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { ToolError } from "./tool-error.js";
import type { ToolErrorReason } from "./tool-error.js";
import type { ToolContext } from "./tool.js";

/** Shared by the tool tests: a recording ToolContext and a real local HTTP server. */

export interface StoredArtifact {
  readonly contentType: string;
  readonly bytes: Uint8Array;
}

export interface RecordingContext extends ToolContext {
  readonly artifacts: Map<string, StoredArtifact>;
}

export function testContext(signal: AbortSignal = new AbortController().signal): RecordingContext {
  const artifacts = new Map<string, StoredArtifact>();
  return {
    signal,
    idempotencyKey: "thread-1:main/fetch[0]",
    threadId: "thread-1",
    stepPath: "main/fetch[0]",
    env: {},
    artifacts,
    async writeArtifact(name, contentType, bytes) {
      artifacts.set(name, { contentType, bytes });
    },
  };
}

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface TestServer {
  /** Base URL without a trailing slash, such as http://127.0.0.1:40123. */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** A node:http server on a free port; `handle` answers each request after its body is read. */
export async function startTestServer(
  handle: (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>,
): Promise<TestServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(received);
      void Promise.resolve(handle(received, res)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** The ToolError `call` rejects with, checked to have `reason`. */
export async function toolError(call: Promise<unknown>, reason: ToolErrorReason): Promise<ToolError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).reason, (error as ToolError).message).toBe(reason);
    return error as ToolError;
  }
  throw new Error(`expected a ToolError (${reason}), the call succeeded`);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}
