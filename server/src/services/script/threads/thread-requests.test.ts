import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  checkCallbackUrl,
  checkMetadata,
  checkStepPath,
  checkThreadId,
  chunkBytesOf,
  decodeThreadCursor,
  encodeThreadCursor,
  threadTimeoutMs,
} from "./thread-requests.js";

function refusal(run: () => unknown): ConnectError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    return error as ConnectError;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("request checks", () => {
  it("checks thread ids and step paths", () => {
    expect(refusal(() => checkThreadId("")).rawMessage).toBe("thread_id is required");
    expect(refusal(() => checkThreadId("nope")).rawMessage).toMatch(/^thread_id: "nope"/);
    checkThreadId("0B9A4C0E-5F1D-4C52-9A51-1F1D2A3B4C5D");
    checkStepPath("", false);
    checkStepPath("1.0.2", true);
    expect(refusal(() => checkStepPath("", true)).rawMessage).toBe("step_path is required");
    expect(refusal(() => checkStepPath("1.0", false)).rawMessage).toMatch(/^step_path: "1.0"/);
  });

  it("parses timeouts, with the default for empty", () => {
    expect(threadTimeoutMs("", 0)).toBe(0);
    expect(threadTimeoutMs("", 60_000)).toBe(60_000);
    expect(threadTimeoutMs("1h30m", 0)).toBe(5_400_000);
    expect(refusal(() => threadTimeoutMs("90", 0)).rawMessage).toMatch(/^timeout: "90"/);
    expect(refusal(() => threadTimeoutMs("0s", 0)).rawMessage).toMatch(/^timeout: "0s" must be longer than 0/);
  });

  it("limits metadata", () => {
    checkMetadata({ team: "payments", owner: "", ["k".repeat(40)]: "v".repeat(500) });
    expect(refusal(() => checkMetadata({ "": "v" })).rawMessage).toBe("metadata: a key is empty");
    expect(
      refusal(() => checkMetadata(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])))).rawMessage,
    ).toMatch(/^metadata has 51 entries/);
    expect(refusal(() => checkMetadata({ ["k".repeat(41)]: "v" })).rawMessage).toMatch(/the key is longer than 40/);
    expect(refusal(() => checkMetadata({ team: "v".repeat(501) })).rawMessage).toMatch(
      /^metadata\["team"\]: the value is longer than 500/,
    );
  });

  it("accepts http(s) callback URLs to public hosts only", () => {
    checkCallbackUrl("", false);
    checkCallbackUrl("https://hooks.example.com/thread?x=1", false);
    checkCallbackUrl("http://93.184.216.34:8080/hook", false);
    expect(refusal(() => checkCallbackUrl("ftp://example.com/", false)).rawMessage).toMatch(
      /^callback_url: the scheme must be https or http/,
    );
    expect(refusal(() => checkCallbackUrl("/relative", false)).rawMessage).toMatch(
      /^callback_url: "\/relative" is not an absolute URL/,
    );
    for (const url of [
      "http://localhost:3000/",
      "http://127.0.0.1/",
      "http://10.1.2.3/",
      "http://[::1]/",
      "http://169.254.169.254/latest",
      "http://192.168.0.10/",
      "http://[fe80::1]/",
      "http://[::ffff:10.0.0.1]/",
      "http://0x7f.1/",
    ]) {
      expect(refusal(() => checkCallbackUrl(url, false)).rawMessage).toMatch(
        /^callback_url: ".*" is an? [a-z -]+, which this server does not call$/,
      );
      checkCallbackUrl(url, true);
    }
    expect(refusal(() => checkCallbackUrl("http://169.254.169.254/latest", false)).rawMessage).toBe(
      'callback_url: "169.254.169.254" is a link-local address, which this server does not call',
    );
  });

  it("moves chunk sizes into their bounds", () => {
    expect(chunkBytesOf(0)).toBe(2 * 1024 * 1024);
    expect(chunkBytesOf(1)).toBe(64 * 1024);
    expect(chunkBytesOf(100_000)).toBe(100_000);
    expect(chunkBytesOf(2 ** 30)).toBe(16 * 1024 * 1024);
    expect(refusal(() => chunkBytesOf(-1)).rawMessage).toMatch(/^max_chunk_bytes/);
  });

  it("round-trips list cursors and refuses them under other filters", () => {
    const cursor = { createdAt: 1_700_000_000_123, id: "0b9a4c0e-5f1d-4c52-9a51-1f1d2a3b4c5d" };
    const token = encodeThreadCursor(cursor, "2:demo");
    expect(decodeThreadCursor(token, "2:demo")).toEqual(cursor);
    expect(decodeThreadCursor("", "2:demo")).toBeUndefined();
    expect(refusal(() => decodeThreadCursor(token, "0:")).rawMessage).toMatch(
      /^page_token was issued for other filters/,
    );
    expect(refusal(() => decodeThreadCursor("garbage", "0:")).rawMessage).toMatch(/^page_token/);
  });
});
