import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { answerError, renderConnectError, renderErrorForm, type ErrorAnswer } from "./error-answer.js";
import { MAX_ERROR_MESSAGE_CHARS } from "./normalize-error.js";
import { RequestRefusal } from "./request-refusal.js";
import { bodyTooLarge } from "./rest-exchange.js";

const decoder = new TextDecoder();
const read = (answer: ErrorAnswer) => ({
  status: answer.status,
  headers: Object.fromEntries(answer.header),
  body: JSON.parse(decoder.decode(answer.body)) as unknown,
});

describe("answerError", () => {
  it("decides status, headers and message once, whatever shape the plane writes", () => {
    const refusal = new RequestRefusal("method-not-allowed", "DELETE is not allowed on /x; allowed: GET", {
      allow: "GET",
    });
    const rpc = read(answerError(refusal, { requestId: "r", render: renderConnectError }));
    const issuer = read(answerError(refusal, { requestId: "r", render: renderErrorForm("error") }));
    const token = read(answerError(refusal, { requestId: "r", render: renderErrorForm("oauth") }));
    const headers = { allow: "GET", "content-type": "application/json" };
    expect(rpc).toEqual({
      status: 405,
      headers,
      body: { code: "unimplemented", message: "DELETE is not allowed on /x; allowed: GET" },
    });
    expect(issuer).toEqual({ status: 405, headers, body: { error: "DELETE is not allowed on /x; allowed: GET" } });
    expect(token).toEqual({
      status: 405,
      headers,
      body: { error: "invalid_request", error_description: "DELETE is not allowed on /x; allowed: GET" },
    });
  });

  it("gives each refusal its HTTP status", () => {
    const statuses = [
      new RequestRefusal("not-found", "no route"),
      new RequestRefusal("bad-path", "bad segment"),
      bodyTooLarge(10),
      new RequestRefusal("unsupported-media-type", "send application/json", { accept: "application/json" }),
    ].map((refusal) => answerError(refusal, { requestId: "r", render: renderConnectError }).status);
    expect(statuses).toEqual([404, 400, 413, 415]);
  });

  it("cuts a refusal's message that echoes a long path, as any other error's", () => {
    const path = `/${"p".repeat(5000)}`;
    const answered = read(
      answerError(new RequestRefusal("not-found", `no route for GET ${path}`), {
        requestId: "r",
        render: renderErrorForm("error"),
      }),
    );
    expect((answered.body as { error: string }).error).toHaveLength(MAX_ERROR_MESSAGE_CHARS + 1);
  });

  it("answers an unexpected error internal with the request id only, and hands the original on", () => {
    const seen: unknown[] = [];
    const failure = new Error("duplicate key value violates unique constraint, params: secret");
    for (const render of [renderConnectError, renderErrorForm("error"), renderErrorForm("code-message")]) {
      const answered = answerError(failure, { requestId: "req-1", render, onUnexpected: (error) => seen.push(error) });
      expect(answered.status).toBe(500);
      expect(decoder.decode(answered.body)).toContain("internal error (request id req-1)");
      expect(decoder.decode(answered.body)).not.toContain("secret");
    }
    expect(seen).toEqual([failure, failure, failure]);
  });

  it("keeps a deliberate error's code, message, metadata and the headers middleware set", () => {
    const header = new Headers({ "access-control-allow-origin": "https://app.example" });
    const error = new ConnectError("slow down", Code.ResourceExhausted, { "retry-after": "7" });
    expect(read(answerError(error, { requestId: "r", render: renderErrorForm("code-message"), header }))).toEqual({
      status: 429,
      headers: {
        "access-control-allow-origin": "https://app.example",
        "retry-after": "7",
        "content-type": "application/json",
      },
      body: { code: "resource_exhausted", message: "slow down" },
    });
  });
});
