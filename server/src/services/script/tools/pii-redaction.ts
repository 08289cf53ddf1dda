/**
 * Finds e-mail addresses and phone numbers in text and replaces them, for `text.redact`.
 *
 * Both scans are linear in the text, whatever the text. The patterns have bounded quantifiers
 * only, and no quantified group can match the same text in two ways, so the regex engine's work at
 * one position is bounded by a constant; e-mail addresses are looked for only around an `@`, and
 * the phone scan only moves forward. The phone pattern finds candidates (digit groups joined by
 * spaces, dashes, dots or slashes, with an optional `+country` and `(area)` part); the rules in
 * `isPhoneNumber` then keep dates, times, prices, versions, IP addresses and identifiers out.
 */

export type PiiKind = "email" | "phone";

export const PII_KINDS: readonly PiiKind[] = ["email", "phone"];

export interface Redaction {
  readonly text: string;
  readonly counts: Record<PiiKind, number>;
}

/** Characters of an e-mail address's local part (before the `@`), of which it may have 64. */
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;
const MAX_LOCAL = 64;

/**
 * The domain after an `@`: one to eight labels, each ending at its dot (so the domain splits one
 * way only), then a top-level domain of letters. `name@1.2.3` (a package version) has none.
 */
const DOMAIN = /(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/y;

/**
 * Phone candidates. The lookbehind keeps a candidate from starting inside a word, a number, an
 * identifier (`ORD-2024…`), after a currency sign or a `#`. `+` and at least seven digits with no
 * separator is the E.164 form; otherwise up to seven groups of one to eight digits, after a
 * `+country` or a national prefix before an `(area)` (`1 (800) …`).
 */
const PHONE =
  /(?<![\p{L}\p{N}_@#$€£¥₹+\-./])(?:\+\d{7,15}(?!\d)|(?:\+\d{1,4}[ .-]?|\d{1,3} ?(?=\())?(?:\(\d{1,5}\)[ .-]?)?\d{1,8}(?:[ ./-]\d{1,8}){0,6})(?![\p{L}\p{N}_@])/gu;

/** Replaces the kinds asked for; `replacement` may say `{kind}`, which becomes `email` or `phone`. */
export function redactPii(text: string, kinds: readonly PiiKind[], replacement: string): Redaction {
  const counts: Record<PiiKind, number> = { email: 0, phone: 0 };
  const mark = (kind: PiiKind) => replacement.replaceAll("{kind}", kind);
  let result = text;
  // E-mail addresses first: their local parts may hold digits the phone pattern would look at.
  if (kinds.includes("email")) {
    result = replaceEmails(result, () => {
      counts.email++;
      return mark("email");
    });
  }
  if (kinds.includes("phone")) {
    result = replacePhones(result, () => {
      counts.phone++;
      return mark("phone");
    });
  }
  return { text: result, counts };
}

/**
 * An address is found from its `@`, not by a pattern tried at every position: a pattern that
 * starts with the local part would try up to 64 characters at each position of a text with no
 * `@`. Walking back from each `@` stops at the previous one, so each character is read once.
 */
function replaceEmails(text: string, replace: () => string): string {
  const domain = new RegExp(DOMAIN.source, DOMAIN.flags);
  let out = "";
  let copied = 0;
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > copied && at - start < MAX_LOCAL && LOCAL_CHAR.test(text.charAt(start - 1))) start--;
    if (start === at) continue;
    domain.lastIndex = at + 1;
    const match = domain.exec(text);
    if (match === null) continue;
    out += text.slice(copied, start) + replace();
    copied = at + 1 + match[0].length;
    at = copied - 1;
  }
  return out + text.slice(copied);
}

/**
 * A candidate the rules refuse is skipped whole (a card number's last three groups are not a
 * phone number), except after a first word that is a date or an identifier (`2024-05-01 415-555-2671`):
 * the search goes on at the next word. It only ever moves forward, so the scan stays linear.
 */
function replacePhones(text: string, replace: () => string): string {
  const pattern = new RegExp(PHONE.source, PHONE.flags);
  let out = "";
  let copied = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const candidate = match[0];
    if (isPhoneNumber(candidate, text, match.index)) {
      out += text.slice(copied, match.index) + replace();
      copied = match.index + candidate.length;
      continue;
    }
    const space = candidate.indexOf(" ");
    if (space > 0 && /[./-]/.test(candidate.slice(0, space))) pattern.lastIndex = match.index + space + 1;
  }
  return out + text.slice(copied);
}

/** The rules that tell a phone number from the other digit groups text is full of. */
function isPhoneNumber(candidate: string, text: string, index: number): boolean {
  const after = text.slice(index + candidate.length, index + candidate.length + 2);
  // 12.50 or 10:30 or 2024-05-01/…: the candidate is the start of a larger number, time or date.
  if (/^[.,:/-]\d/.test(after)) return false;
  const before = text.slice(Math.max(0, index - 2), index);
  // 10:30 15 …, 3,415 …: a candidate right after a time or a number is part of it.
  if (/\d[:,]$/.test(before)) return false;

  const digits = candidate.replace(/\D/g, "").length;
  if (candidate.startsWith("+")) return digits >= 8 && digits <= 15;

  const groups = candidate.replace(/\(\d+\)/, (area) => ` ${area.slice(1, -1)} `).match(/\d+/g) ?? [];
  const separators = new Set(candidate.match(/[ ./-]/g) ?? []);
  const hasArea = candidate.includes("(");
  // A national number is written in groups (a bare run of digits is an identifier) of 9 to 12 digits.
  if (groups.length < 2 || digits < 9 || digits > 12) return false;
  const last = groups[groups.length - 1] ?? "";
  const first = groups[0] ?? "";
  // ISBNs and the like end with a single check digit; numbers end with a group of two or more.
  if (last.length < 2) return false;
  if (!hasArea) {
    // 123 456 789 or 1.234.567: a number with thousands grouped, not a phone number.
    if (first.length <= 3 && groups.slice(1).every((group) => group.length === 3) && !separators.has("-")) return false;
    // Dots only: an IP address (192.168.10.200) or a version (10.4.12.1234).
    if (separators.size === 1 && separators.has(".")) {
      if (groups.length === 4 && groups.every((group) => group.length <= 3)) return false;
      if (groups.some((group) => group.length === 1)) return false;
    }
    // A group longer than four digits is written after a trunk prefix (030 1234567), never in an id.
    if (groups.some((group) => group.length > 4) && !first.startsWith("0")) return false;
  }
  return true;
}
