import type { EmailTokenPurpose } from "./identity-schema.js";

/** A message's subject and plain-text body. */
export interface ComposedMail {
  readonly subject: string;
  readonly text: string;
}

/**
 * The identity e-mails: plain text, one link each, saying how long the link works so a person who
 * clicks late knows why it failed. `appName` is the pool's display name (or its name).
 */
export function composeAccountMail(purpose: EmailTokenPurpose, appName: string, link: string): ComposedMail {
  switch (purpose) {
    case "verify":
      return {
        subject: `Confirm your e-mail address for ${appName}`,
        text: `Confirm your e-mail address for ${appName} by opening this link within 3 days:\n\n${link}\n\nIf you did not sign up, ignore this message.\n`,
      };
    case "reset":
      return {
        subject: `Reset your ${appName} password`,
        text: `Choose a new password for ${appName} by opening this link within 30 minutes:\n\n${link}\n\nIf you did not ask for this, ignore this message; your password stays as it is.\n`,
      };
    case "invite":
      return {
        subject: `You are invited to ${appName}`,
        text: `An account was created for you on ${appName}. Choose your password by opening this link within 7 days:\n\n${link}\n`,
      };
  }
}
