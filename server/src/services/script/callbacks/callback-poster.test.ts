import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedDispatcher, privateNetworkErrorOf } from "../../../net/private-network.js";
import { createCallbackPoster } from "./callback-poster.js";

let receiver: Server;
let url: string;
const seen: { path: string; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", body });
      if (req.url === "/moved") res.writeHead(307, { location: "/elsewhere" }).end();
      else res.writeHead(202).end("x".repeat(200_000));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

describe("the callback poster", () => {
  it("posts the body and headers and answers the status, whatever the answer's size", async () => {
    const post = createCallbackPoster(createGuardedDispatcher({ allowPrivateNetwork: true }));
    expect(
      await post(`${url}/hook`, { "content-type": "application/json" }, '{"a":1}', AbortSignal.timeout(5_000)),
    ).toEqual({ status: 202 });
    expect(seen.at(-1)).toEqual({ path: "/hook", body: '{"a":1}' });
  });

  it("does not follow a redirect", async () => {
    const post = createCallbackPoster(createGuardedDispatcher({ allowPrivateNetwork: true }));
    expect(await post(`${url}/moved`, {}, "{}", AbortSignal.timeout(5_000))).toEqual({ status: 307 });
    expect(seen.some((s) => s.path === "/elsewhere")).toBe(false);
  });

  it("refuses a private address unless the operator allows it", async () => {
    const before = seen.length;
    const post = createCallbackPoster(createGuardedDispatcher({ allowPrivateNetwork: false }));
    const error = await post(`${url}/hook`, {}, "{}", AbortSignal.timeout(5_000)).catch((e: unknown) => e);
    expect(privateNetworkErrorOf(error)?.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(seen.length).toBe(before);
  });
});
