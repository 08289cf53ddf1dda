import { once } from "node:events";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Logger } from "../../log/logger.js";
import { composeAccountMail } from "./account-mail.js";
import { identityMailOutbox } from "./identity-schema.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { readMailConfig } from "./mail-config.js";
import { createMailOutbox, type QueuedMail } from "./mail-outbox.js";
import { createSmtpMailSender, type MailSender, type OutgoingMail } from "./smtp-mail-sender.js";

let fixture: IdentityTestFixture;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
});
afterAll(() => fixture.close());

function recordingLogger() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const logger: Logger = {
    info: (msg, fields = {}) => lines.push({ level: "info", msg, fields }),
    warn: (msg, fields = {}) => lines.push({ level: "warn", msg, fields }),
    error: (msg, fields = {}) => lines.push({ level: "error", msg, fields }),
  };
  return { lines, logger };
}

function mail(to: string): QueuedMail {
  const link = `https://id.example/acme/app/verify?token=${to}`;
  return { to, purpose: "verify", link, ...composeAccountMail("verify", "App", link) };
}

describe(`mail outbox (${engineName})`, () => {
  it("logs a message with its link when no SMTP server is configured, and keeps the body sealed", async () => {
    const { ref } = await fixture.newPool();
    const { lines, logger } = recordingLogger();
    const outbox = createMailOutbox(fixture.database.db, fixture.box, { logger });
    const id = await outbox.enqueue(ref, mail("ada@example.com"));
    const [row] = await fixture.database.db.select().from(identityMailOutbox).where(eq(identityMailOutbox.id, id));
    expect(Buffer.from(row!.sealedBody).toString("latin1")).not.toContain("verify?token");

    expect(await outbox.deliverDue()).toEqual({ composed: 0, dropped: 0, sent: 0, logged: 1, retrying: 0, failed: 0 });
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        fields: expect.objectContaining({
          to: "ada@example.com",
          link: "https://id.example/acme/app/verify?token=ada@example.com",
        }),
      }),
    ]);
    expect(await outbox.deliverDue()).toEqual({ composed: 0, dropped: 0, sent: 0, logged: 0, retrying: 0, failed: 0 });
  });

  it("sends through the sender without logging the link, retries with backoff, then gives up", async () => {
    const { ref } = await fixture.newPool();
    let clock = Date.now();
    const sent: OutgoingMail[] = [];
    let failures = 0;
    const sender: MailSender = {
      async send(message) {
        if (message.to.startsWith("bounce")) {
          failures++;
          throw new Error("550 mailbox unavailable");
        }
        sent.push(message);
      },
      close() {},
    };
    const { lines, logger } = recordingLogger();
    const outbox = createMailOutbox(fixture.database.db, fixture.box, {
      sender,
      logger,
      now: () => clock,
      maxAttempts: 3,
    });
    await outbox.enqueue(ref, mail("ada@example.com"));
    await outbox.enqueue(ref, mail("bounce@example.com"));

    expect(await outbox.deliverDue()).toEqual({ composed: 0, dropped: 0, sent: 1, logged: 0, retrying: 1, failed: 0 });
    expect(sent).toEqual([
      {
        to: "ada@example.com",
        subject: "Confirm your e-mail address for App",
        text: expect.stringContaining("verify?token=ada@example.com"),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain("token=");

    expect(await outbox.deliverDue()).toEqual({ composed: 0, dropped: 0, sent: 0, logged: 0, retrying: 0, failed: 0 });
    clock += 30_000;
    expect((await outbox.deliverDue()).retrying).toBe(1);
    clock += 30_000;
    expect((await outbox.deliverDue()).retrying).toBe(0);
    clock += 30_000;
    expect(await outbox.deliverDue()).toEqual({ composed: 0, dropped: 0, sent: 0, logged: 0, retrying: 0, failed: 1 });
    expect(failures).toBe(3);
    expect(lines.at(-1)).toMatchObject({ level: "error", fields: { error: "550 mailbox unavailable" } });
  });

  it("composes a request when delivering it, retries one whose composing failed, and drops it after the last attempt", async () => {
    const { ref } = await fixture.newPool();
    let clock = Date.now();
    const { lines, logger } = recordingLogger();
    const outbox = createMailOutbox(fixture.database.db, fixture.box, { logger, now: () => clock, maxAttempts: 2 });
    await outbox.request(ref, { to: "Ada@example.com", purpose: "reset" });
    await outbox.request(ref, { to: "flaky@example.com", purpose: "reset" });
    const asked: string[] = [];
    const compose = async (_pool: unknown, request: { readonly to: string }) => {
      asked.push(request.to);
      if (request.to.startsWith("flaky")) throw new Error("user store unreachable");
      return async () => mail("ada@example.com");
    };
    expect(await outbox.deliverDue(50, compose)).toEqual({
      composed: 1,
      dropped: 0,
      sent: 0,
      logged: 1,
      retrying: 0,
      failed: 0,
    });
    expect(lines.filter((line) => line.level === "info")).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ to: "ada@example.com" }) }),
    ]);
    expect(lines.find((line) => line.level === "warn")).toMatchObject({ fields: { error: "user store unreachable" } });
    // The failed one waits for its retry, then is dropped for good with its address.
    expect(await outbox.deliverDue(50, compose)).toMatchObject({ composed: 0, dropped: 0 });
    clock += 30_000;
    await outbox.deliverDue(50, compose);
    expect(asked).toEqual(["Ada@example.com", "flaky@example.com", "flaky@example.com"]);
    const rows = await fixture.database.db
      .select()
      .from(identityMailOutbox)
      .where(eq(identityMailOutbox.poolId, ref.poolId));
    expect(rows.map((row) => row.recipient)).toEqual(["ada@example.com"]);
    expect(JSON.stringify(lines)).not.toContain("flaky@example.com");
  });

  it("never sends one message twice when deliveries run side by side", async () => {
    const { ref } = await fixture.newPool();
    const sent: string[] = [];
    const sender: MailSender = { send: async (message) => void sent.push(message.to), close() {} };
    const outbox = createMailOutbox(fixture.database.db, fixture.box, { sender, logger: recordingLogger().logger });
    for (let i = 0; i < 12; i++) await outbox.enqueue(ref, mail(`user${i}@example.com`));
    await Promise.all([outbox.deliverDue(5), outbox.deliverDue(5), outbox.deliverDue(5), outbox.deliverDue(5)]);
    await outbox.deliverDue();
    expect(sent).toHaveLength(12);
    expect(new Set(sent).size).toBe(12);
  });
});

describe("SMTP sender", () => {
  it("hands a message to an SMTP server", async () => {
    const received: string[] = [];
    const server = createServer((socket: Socket) => {
      let data = false;
      let buffer = "";
      socket.write("220 test ESMTP\r\n");
      socket.on("data", (chunk) => {
        buffer += chunk.toString("utf8");
        let end: number;
        while (data ? (end = buffer.indexOf("\r\n.\r\n")) >= 0 : (end = buffer.indexOf("\r\n")) >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + (data ? 5 : 2));
          if (data) {
            received.push(line);
            data = false;
            socket.write("250 queued\r\n");
          } else if (/^(EHLO|HELO)/i.test(line)) socket.write("250 test\r\n");
          else if (/^DATA/i.test(line)) {
            data = true;
            socket.write("354 go on\r\n");
          } else if (/^QUIT/i.test(line)) socket.end("221 bye\r\n");
          else socket.write("250 ok\r\n");
        }
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const config = readMailConfig({
      PLATFORM_SMTP_URL: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
      PLATFORM_MAIL_FROM: "App <no-reply@example.com>",
    });
    const sender = createSmtpMailSender(config!);
    try {
      await sender.send({ to: "ada@example.com", subject: "Hello", text: "Open https://id.example/x\n" });
    } finally {
      sender.close();
      server.close();
    }
    expect(received).toHaveLength(1);
    expect(received[0]).toMatch(/^From: App <no-reply@example.com>$/m);
    expect(received[0]).toMatch(/^To: ada@example.com$/m);
    expect(received[0]).toMatch(/^Subject: Hello$/m);
    expect(received[0]).toContain("Open https://id.example/x");
  });

  it("reads its configuration, refusing a bad URL without echoing it", () => {
    expect(readMailConfig({})).toBeUndefined();
    expect(readMailConfig({ PLATFORM_SMTP_URL: "smtps://u:p@mail.example:465", PLATFORM_MAIL_FROM: "a@b.c" })).toEqual({
      smtpUrl: "smtps://u:p@mail.example:465",
      from: "a@b.c",
    });
    expect(() => readMailConfig({ PLATFORM_SMTP_URL: "smtps://u:p@mail.example:465" })).toThrow(
      /PLATFORM_MAIL_FROM is required/,
    );
    expect(() =>
      readMailConfig({ PLATFORM_SMTP_URL: "http://u:secret@mail.example", PLATFORM_MAIL_FROM: "a@b.c" }),
    ).toThrow(/smtp:\/\/ or smtps:\/\//);
    expect(() => readMailConfig({ PLATFORM_SMTP_URL: "not a url secret", PLATFORM_MAIL_FROM: "a@b.c" })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining("secret") }),
    );
  });
});
