import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { createLogger, REDACTED } from "./logger.js";

function capture() {
  const lines: string[] = [];
  const logger = createLogger((line) => lines.push(line));
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, parsed };
}

describe("createLogger", () => {
  it("writes one JSON object per line with time, level, msg and the fields", () => {
    const { logger, lines, parsed } = capture();
    logger.info("started", { port: 8080 });
    logger.warn("slow", { durationMs: 1200 });
    logger.error("failed", { nested: { status: 500 } });
    expect(lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n"))).toBe(true);
    const [info, warn, error] = parsed();
    expect(info).toEqual({ time: expect.any(String), level: "info", msg: "started", port: 8080 });
    expect(new Date(info!.time as string).toISOString()).toBe(info!.time);
    expect([warn!.level, warn!.durationMs, error!.level, error!.nested]).toEqual([
      "warn",
      1200,
      "error",
      { status: 500 },
    ]);
  });

  it("never writes credentials: authorization, cookie and secret/password/token/key fields at any depth", () => {
    const { logger, lines, parsed } = capture();
    const credentials = [
      "Bearer sk-live-1",
      "session=abc",
      "hunter2",
      "tok-123",
      "s3cr3t",
      "pk-9",
      "xyz-cookie",
      "proxy-basic",
    ];
    logger.info("request", {
      headers: {
        authorization: credentials[0],
        Cookie: credentials[1],
        "x-request-id": "r-1",
        "proxy-authorization": credentials[7],
      },
      password: credentials[2],
      config: {
        accessToken: credentials[3],
        clientSecret: credentials[4],
        apiKey: credentials[5],
        list: [{ "set-cookie": credentials[6] }],
      },
    });
    for (const credential of credentials) expect(lines.join("")).not.toContain(credential);
    const [line] = parsed();
    expect(line).toMatchObject({
      headers: { authorization: REDACTED, Cookie: REDACTED, "x-request-id": "r-1", "proxy-authorization": REDACTED },
      password: REDACTED,
      config: { accessToken: REDACTED, clientSecret: REDACTED, apiKey: REDACTED, list: [{ "set-cookie": REDACTED }] },
    });
  });

  it("redacts a top-level field on every line, not only the first time its name is seen", () => {
    const { logger, lines, parsed } = capture();
    for (let i = 0; i < 3; i++) logger.info("request", { route: "/v1/x", sessionToken: `tok-${i}`, status: 200 });
    expect(lines.join("")).not.toContain("tok-");
    expect(parsed().map((line) => [line.route, line.sessionToken, line.status])).toEqual(
      Array.from({ length: 3 }, () => ["/v1/x", REDACTED, 200]),
    );
  });

  it("redacts Headers and Map values by name too", () => {
    const { logger, lines } = capture();
    logger.info("x", {
      headers: new Headers({ authorization: "Bearer leak", accept: "json" }),
      map: new Map([["token", "leak2"]]),
    });
    expect(lines[0]).not.toContain("leak");
    expect(lines[0]).toContain('"accept":"json"');
  });

  it("does not let a field overwrite time, level or msg", () => {
    const { logger, parsed } = capture();
    logger.warn("real", { msg: "fake", level: "info", time: "then" });
    expect(parsed()[0]).toMatchObject({ msg: "real", level: "warn" });
    expect(parsed()[0]!.time).not.toBe("then");
  });

  it("logs errors, bigints and cycles without throwing", () => {
    const { logger, parsed } = capture();
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic.self = cyclic;
    const shared = { n: 1 };
    logger.error("boom", { err: new Error("disk full"), big: 12n, cyclic, pair: [shared, shared] });
    const line = parsed()[0]!;
    expect(line.err).toMatchObject({ name: "Error", message: "disk full" });
    expect([line.big, line.cyclic, line.pair]).toEqual(["12", { name: "a", self: "[circular]" }, [{ n: 1 }, { n: 1 }]]);
  });

  it("logs a failed query's statement without its bound parameters, in the message, the stack and the cause", () => {
    const { logger, lines, parsed } = capture();
    const cause = new Error('invalid byte sequence for encoding "UTF8": 0x00');
    const failed = new DrizzleQueryError(
      'insert into "env_vars" ("key", "value") values ($1, $2)',
      ["API_TOKEN", "s3cret-value"],
      cause,
    );
    logger.error("call failed", { error: new Error("wrapped", { cause: failed }) });
    expect(lines.join("")).not.toContain("s3cret-value");
    const logged = (parsed()[0]!.error as { cause: { message: string; stack: string; cause: { message: string } } })
      .cause;
    expect(logged.message).toBe('Failed query: insert into "env_vars" ("key", "value") values ($1, $2)');
    expect(logged.stack).toMatch(/^\w*Error: Failed query: .*\n\s+at /);
    expect(logged.cause.message).toBe(cause.message);
  });
});
