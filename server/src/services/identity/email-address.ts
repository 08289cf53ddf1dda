import { Code, ConnectError } from "@connectrpc/connect";

export interface EmailAddress {
  /** As written, trimmed. */
  readonly email: string;
  /** Lower-cased: what uniqueness, lookups and ordering use. */
  readonly normalized: string;
}

const MAX_EMAIL = 254;
// Deliberately loose (one @, something on both sides, no spaces): the only real check of an address
// is the verification link, and strict patterns refuse valid addresses.
const SHAPE = /^[^\s@]{1,64}@[^\s@]+$/;

/** Checks and normalises an e-mail address; INVALID_ARGUMENT naming `field` when it is not one. */
export function parseEmailAddress(email: string, field = "email"): EmailAddress {
  const trimmed = email.trim();
  if (trimmed.length > MAX_EMAIL || !SHAPE.test(trimmed))
    throw new ConnectError(`${field} is not an e-mail address`, Code.InvalidArgument);
  return { email: trimmed, normalized: trimmed.toLowerCase() };
}
