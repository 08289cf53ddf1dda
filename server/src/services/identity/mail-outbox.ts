import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { startPollLoop, type PollLoop } from "../../background/poll-loop.js";
import type { Database } from "../../db/database.js";
import type { Logger } from "../../log/logger.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { identityMailOutbox, type EmailTokenPurpose } from "./identity-schema.js";
import type { PoolRef } from "./pool-store.js";
import type { MailSender } from "./smtp-mail-sender.js";

export interface QueuedMail {
  readonly to: string;
  readonly purpose: EmailTokenPurpose;
  readonly subject: string;
  readonly text: string;
  /** The message's link, kept apart so the log can show it when nothing is sent. */
  readonly link: string;
}

/** A message asked for by address alone: who it goes to, if anyone, is decided when it is delivered. */
export interface MailRequest {
  readonly to: string;
  readonly purpose: EmailTokenPurpose;
}

/**
 * Decides a requested message: undefined when the request comes to nothing, else how to write the
 * mail: a step that writes what the mail needs (a link token) through `tx`, which commits with it.
 * Deciding runs outside any transaction, so it may read other databases at leisure.
 */
export type ComposeRequest = (
  pool: PoolRef,
  request: MailRequest,
) => Promise<((tx: Database) => Promise<QueuedMail>) | undefined>;

export interface DeliveryReport {
  /** Requests that became a mail, and requests that came to nothing. */
  readonly composed: number;
  readonly dropped: number;
  readonly sent: number;
  readonly logged: number;
  readonly retrying: number;
  readonly failed: number;
}

/**
 * The identity e-mails, written to an outbox in the transaction that decided to send them (the
 * user row and the link token commit together with the message, or not at all), then delivered
 * by {@link MailOutbox.deliverDue}. Bodies hold live links and are sealed at rest.
 *
 * Without an SMTP sender a message is written to the log with its link and marked `logged`: the
 * embedded default has no mail server and a developer follows the link from the log. With a sender
 * the log line carries no link, since a link in a log is a credential in a log. Failed sends are
 * retried with exponential backoff, then marked `failed`. Rows are claimed with a lease under
 * `FOR UPDATE SKIP LOCKED`, so several server processes deliver without sending a message twice.
 *
 * A request ({@link MailOutbox.request}) is queued without knowing whether it leads anywhere, so
 * that queueing it costs the same either way (POST /recover must not tell who is registered by
 * how long it takes); delivery composes it first, then sends it like any other message.
 */
export interface MailOutbox {
  enqueue(pool: PoolRef, mail: QueuedMail, db?: Database): Promise<string>;
  request(pool: PoolRef, request: MailRequest): Promise<string>;
  /** Composes due requests (when given `compose`; otherwise they wait) and sends due messages. */
  deliverDue(max?: number, compose?: ComposeRequest): Promise<DeliveryReport>;
}

export interface MailOutboxOptions {
  readonly sender?: MailSender | undefined;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly maxAttempts?: number;
}

const LEASE_MS = 60_000;
const FIRST_RETRY_MS = 30_000;
const LAST_RETRY_MS = 3_600_000;
const bodyContext = (id: string) => `identity-mail:${id}`;

export function createMailOutbox(db: Database, box: SecretBox, options: MailOutboxOptions): MailOutbox {
  const now = options.now ?? Date.now;
  const maxAttempts = options.maxAttempts ?? 8;
  const { logger, sender } = options;

  async function claim(status: "pending" | "requested", max: number, at: number) {
    return db.transaction(async (tx) => {
      const due = await tx
        .select({ id: identityMailOutbox.id })
        .from(identityMailOutbox)
        .where(
          and(
            eq(identityMailOutbox.status, status),
            lte(identityMailOutbox.nextAttemptAt, at),
            lte(identityMailOutbox.leaseExpiresAt, at),
          ),
        )
        .orderBy(asc(identityMailOutbox.nextAttemptAt))
        .limit(max)
        .for("update", { skipLocked: true });
      if (due.length === 0) return [];
      return tx
        .update(identityMailOutbox)
        .set({ leaseExpiresAt: at + LEASE_MS, attempts: sql`${identityMailOutbox.attempts} + 1` })
        .where(
          inArray(
            identityMailOutbox.id,
            due.map((row) => row.id),
          ),
        )
        .returning();
    });
  }

  const sealed = (id: string, mail: Pick<QueuedMail, "text" | "link">) =>
    box.seal(Buffer.from(JSON.stringify({ text: mail.text, link: mail.link }), "utf8"), bodyContext(id));

  /** Turns claimed requests into messages, or deletes them; a failure leaves one for a later round. */
  async function composeDue(compose: ComposeRequest, max: number, report: { composed: number; dropped: number }) {
    for (const row of await claim("requested", max, now())) {
      const fields = { mailId: row.id, purpose: row.purpose, attempt: row.attempts };
      const thisRow = eq(identityMailOutbox.id, row.id);
      try {
        const write = await compose(
          { orgId: row.orgId, poolId: row.poolId },
          { to: row.recipient, purpose: row.purpose },
        );
        if (!write) {
          await db.delete(identityMailOutbox).where(thisRow);
          report.dropped++;
          continue;
        }
        await db.transaction(async (tx) => {
          const mail = await write(tx);
          const message = {
            status: "pending",
            recipient: mail.to,
            subject: mail.subject,
            sealedBody: sealed(row.id, mail),
            attempts: 0,
            nextAttemptAt: 0,
            leaseExpiresAt: 0,
          } as const;
          await tx.update(identityMailOutbox).set(message).where(thisRow);
        });
        report.composed++;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (row.attempts >= maxAttempts) {
          await db.delete(identityMailOutbox).where(thisRow);
          logger.error("identity mail request dropped after failures", { ...fields, error: reason });
        } else {
          await db
            .update(identityMailOutbox)
            .set({ leaseExpiresAt: 0, nextAttemptAt: now() + retryDelay(row.attempts), lastError: reason })
            .where(thisRow);
          logger.warn("identity mail request not composed; will retry", { ...fields, error: reason });
        }
      }
    }
  }

  return {
    async enqueue(pool, mail, executor = db) {
      const id = crypto.randomUUID();
      await executor.insert(identityMailOutbox).values({
        ...pool,
        id,
        recipient: mail.to,
        purpose: mail.purpose,
        subject: mail.subject,
        sealedBody: sealed(id, mail),
      });
      return id;
    },

    async request(pool, request) {
      const id = crypto.randomUUID();
      const sealedBody = sealed(id, { text: "", link: "" });
      await db.insert(identityMailOutbox).values({
        ...pool,
        id,
        recipient: request.to,
        purpose: request.purpose,
        subject: "",
        sealedBody,
        status: "requested",
      });
      return id;
    },

    async deliverDue(max = 50, compose) {
      const report = { composed: 0, dropped: 0, sent: 0, logged: 0, retrying: 0, failed: 0 };
      if (compose) await composeDue(compose, max, report);
      for (const row of await claim("pending", max, now())) {
        const fields = { mailId: row.id, to: row.recipient, purpose: row.purpose, attempt: row.attempts };
        const settle = (set: Partial<typeof identityMailOutbox.$inferInsert>) =>
          db
            .update(identityMailOutbox)
            .set({ leaseExpiresAt: 0, ...set })
            .where(eq(identityMailOutbox.id, row.id));
        try {
          const { text, link } = JSON.parse(
            Buffer.from(box.open(row.sealedBody, bodyContext(row.id))).toString("utf8"),
          ) as { text: string; link: string };
          if (!sender) {
            logger.info("identity mail not sent (no SMTP server configured); its link follows", {
              ...fields,
              subject: row.subject,
              link,
            });
            await settle({ status: "logged", sentAt: now() });
            report.logged++;
            continue;
          }
          await sender.send({ to: row.recipient, subject: row.subject, text });
          await settle({ status: "sent", sentAt: now(), lastError: "" });
          logger.info("identity mail sent", fields);
          report.sent++;
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          if (row.attempts >= maxAttempts) {
            await settle({ status: "failed", lastError: reason });
            logger.error("identity mail failed for good", { ...fields, error: reason });
            report.failed++;
          } else {
            const delay = retryDelay(row.attempts);
            await settle({ nextAttemptAt: now() + delay, lastError: reason });
            logger.warn("identity mail not sent; will retry", { ...fields, error: reason, retryInMs: delay });
            report.retrying++;
          }
        }
      }
      return report;
    },
  };
}

const retryDelay = (attempts: number) => Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempts - 1));

/** Delivers due mail every `intervalMs` until stopped; a failed round is reported and the loop goes on. */
export function startMailDelivery(
  outbox: MailOutbox,
  options: {
    readonly intervalMs: number;
    readonly compose: ComposeRequest;
    readonly onError: (error: unknown) => void;
  },
): PollLoop {
  return startPollLoop(async () => void (await outbox.deliverDue(50, options.compose)), {
    pollMs: options.intervalMs,
    onError: options.onError,
  });
}
