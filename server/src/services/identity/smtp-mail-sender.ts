import { createTransport } from "nodemailer";
import type { MailConfig } from "./mail-config.js";

/** One message as the outbox hands it to a sender. */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface MailSender {
  /** Resolves once the server accepted the message; rejects with the reason otherwise. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Sends through the configured SMTP server (nodemailer: STARTTLS, auth and timeouts handled there). */
export function createSmtpMailSender(config: MailConfig): MailSender {
  const transport = createTransport(config.smtpUrl, { from: config.from });
  return {
    async send(mail) {
      await transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text });
    },
    close: () => transport.close(),
  };
}
