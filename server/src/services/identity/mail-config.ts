import { ConfigError } from "../../config-error.js";

/**
 * How the identity service sends e-mail. Without PLATFORM_SMTP_URL nothing is sent: messages are
 * written to the log with their links, which is what a developer running locally wants. With it,
 * they go through that SMTP server:
 * - `smtps://user:password@smtp.example.com:465` (TLS from the start), or
 * - `smtp://user:password@smtp.example.com:587` (STARTTLS when the server offers it),
 * user and password percent-encoded. PLATFORM_MAIL_FROM is then required (`Example <no-reply@example.com>`).
 */
export interface MailConfig {
  readonly smtpUrl: string;
  readonly from: string;
}

export const MAIL_ENV = {
  smtpUrl: "PLATFORM_SMTP_URL",
  from: "PLATFORM_MAIL_FROM",
} as const;

export function readMailConfig(env: Readonly<Record<string, string | undefined>>): MailConfig | undefined {
  const smtpUrl = env[MAIL_ENV.smtpUrl]?.trim() ?? "";
  if (smtpUrl === "") return undefined;
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    // The value may hold a password: the message describes it without repeating it.
    throw new ConfigError(`${MAIL_ENV.smtpUrl} must be a URL like smtps://user:password@smtp.example.com:465`);
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:")
    throw new ConfigError(`${MAIL_ENV.smtpUrl} must start with smtp:// or smtps://, not ${url.protocol}//`);
  if (url.hostname === "") throw new ConfigError(`${MAIL_ENV.smtpUrl} names no host`);
  const from = env[MAIL_ENV.from]?.trim() ?? "";
  if (from === "") throw new ConfigError(`${MAIL_ENV.from} is required when ${MAIL_ENV.smtpUrl} is set`);
  return { smtpUrl, from };
}
