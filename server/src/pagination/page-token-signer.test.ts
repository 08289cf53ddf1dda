import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { createContextValues } from "@connectrpc/connect";
import type { RestCall, RestResult } from "@platform/codegen/runtime/server";
import { describe, expect, it } from "vitest";
import { IamService } from "../../../gen/platform/iam/v1/iam_service_pb.js";
import { createPageTokenSigner } from "./page-token-signer.js";

const signer = createPageTokenSigner(randomBytes(32));

describe("sign and verify", () => {
  it("gives back the handler's own token, for the list that signed it only", () => {
    const token = signer.sign("/a.B/List", "inner-token");
    expect(signer.verify("/a.B/List", token)).toBe("inner-token");
    expect(signer.verify("/a.B/Other", token)).toBeUndefined();
  });

  it.each([
    ["an edited inner token", (t: string) => `x${t}`],
    ["an edited signature", (t: string) => `${t.slice(0, -2)}${t.endsWith("AA") ? "BB" : "AA"}`],
    ["no signature", (t: string) => t.slice(0, t.lastIndexOf("."))],
    ["a short signature", (t: string) => t.slice(0, -4)],
    // The last of 22 base64 characters carries 2 bits of the MAC and 4 spare ones.
    [
      "a signature edited in its spare bits",
      (t: string) => `${t.slice(0, -1)}${String.fromCharCode(t.charCodeAt(t.length - 1) + 1)}`,
    ],
    ["a token of another key", () => createPageTokenSigner(randomBytes(32)).sign("/a.B/List", "inner-token")],
  ])("refuses %s", (_case, edit) => {
    expect(signer.verify("/a.B/List", edit(signer.sign("/a.B/List", "inner-token")))).toBeUndefined();
  });
});

describe("the RPC interceptor", () => {
  /** ListApiKeys with a handler that pages through "r1", "r2", "r3" one at a time, by its own plain tokens. */
  const seen: string[] = [];
  const client = createClient(
    IamService,
    createRouterTransport(
      (router) =>
        router.service(IamService, {
          listApiKeys(request) {
            seen.push(request.pageToken);
            const next = request.pageToken === "" ? "after-r1" : request.pageToken === "after-r1" ? "after-r2" : "";
            return { apiKeys: [], nextPageToken: next };
          },
        }),
      { router: { interceptors: [signer.interceptor] } },
    ),
  );

  it("signs next_page_token, and hands the handler its own token back", async () => {
    const first = await client.listApiKeys({});
    expect(first.nextPageToken).not.toBe("after-r1");
    const second = await client.listApiKeys({ pageToken: first.nextPageToken });
    expect(seen.slice(-2)).toEqual(["", "after-r1"]);
    expect(second.nextPageToken).toMatch(/^after-r2\./);
  });

  it("refuses a forged or edited page_token before the handler sees it", async () => {
    const before = seen.length;
    for (const forged of [
      "after-r1",
      Buffer.from("anything").toString("base64url"),
      `${(await client.listApiKeys({})).nextPageToken}x`,
    ]) {
      const error = await client.listApiKeys({ pageToken: forged }).catch((e: unknown) => ConnectError.from(e));
      expect(error).toMatchObject({
        code: Code.InvalidArgument,
        rawMessage: "page_token: is not a token from a previous ListApiKeys response",
      });
    }
    expect(seen.length).toBe(before + 1);
  });
});

describe("the REST middleware", () => {
  const operation = { operationId: "listUsers" } as RestCall["operation"];
  const call = (cursor: string | undefined): RestCall => ({
    operation,
    input: { path: {}, query: cursor === undefined ? {} : { cursor }, headers: {} },
    context: {} as RestCall["context"] & { values: ReturnType<typeof createContextValues> },
  });
  const handler = signer.middleware(async (received): Promise<RestResult> => ({
    status: 200,
    body: { users: [], nextCursor: `after:${String(received.input.query.cursor ?? "")}` },
  }));

  it("signs nextCursor and verifies a cursor, naming query.cursor when it does not verify", async () => {
    const first = (await handler(call(undefined))).body as { nextCursor: string };
    const second = (await handler(call(first.nextCursor))).body as { nextCursor: string };
    expect(second.nextCursor).toMatch(/^after:after:\./);
    await expect(handler(call("after:"))).rejects.toMatchObject({ field: "query.cursor" });
  });
});
