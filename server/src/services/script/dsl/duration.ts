/**
 * Durations as people write them in scripts and in CreateThread's `timeout`: `500ms`, `30s`, `5m`,
 * `1h`, `1h30m`, `2d`. The form is Go's `time.ParseDuration` without its fractions and signs, plus
 * a day unit:
 *
 * - one or more `<digits><unit>` parts, units `d` (24 h), `h`, `m`, `s`, `ms`;
 * - units in descending order, each at most once (`1h30m`, not `30m1h` or `1h1h`), so that every
 *   duration has one spelling and `formatDuration` gives it back;
 * - no spaces, signs, fractions or bare numbers: `30` has no unit and is refused rather than guessed
 *   (seconds? milliseconds?);
 * - at most 365 days, so every value is a safe integer of milliseconds and a typo such as
 *   `99999999d` fails loudly.
 *
 * `0s` parses to 0; callers that need a positive duration (timeouts) check that themselves.
 */

export const MAX_DURATION_MS = 365 * 24 * 60 * 60 * 1000;

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
const UNIT_ORDER: readonly Unit[] = ["d", "h", "m", "s", "ms"];

/** `ms` must be tried before `m` and `s`; the regex alternation order does that. */
const PART = /(\d+)(ms|d|h|m|s)/y;

const FORM = 'a duration such as "500ms", "30s", "5m", "1h30m" or "2d"';

/** A duration that does not follow the rule; the message names the field and the text. */
export class DurationError extends Error {
  constructor(
    readonly field: string,
    readonly input: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = "DurationError";
  }
}

/**
 * Parses `text` into milliseconds. `field` names where the text came from (`timeout`,
 * `/steps/0/timeout`) and starts every error message.
 */
export function parseDuration(text: string, field = "duration"): number {
  const shown = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  const fail = (why: string): never => {
    throw new DurationError(field, text, `${shown} is not ${FORM}${why === "" ? "" : ` (${why})`}`);
  };
  if (text === "") fail("it is empty");
  let total = 0;
  let offset = 0;
  let lastUnit = -1;
  while (offset < text.length) {
    PART.lastIndex = offset;
    const match = PART.exec(text);
    if (match === null) {
      let bad = offset;
      while (bad < text.length && /\d/.test(text[bad] as string)) bad++;
      return fail(
        bad === text.length
          ? "a number needs a unit: ms, s, m, h or d"
          : `unexpected ${JSON.stringify(text[bad])} at position ${bad + 1}`,
      );
    }
    const digits = match[1] as string;
    const unit = match[2] as Unit;
    const rank = UNIT_ORDER.indexOf(unit);
    if (rank <= lastUnit) fail(`units go from largest to smallest, each once: d, h, m, s, ms`);
    lastUnit = rank;
    const amount = Number(digits);
    total += amount * UNIT_MS[unit];
    if (!Number.isSafeInteger(amount) || total > MAX_DURATION_MS) {
      throw new DurationError(field, text, `${shown} is longer than the limit of 365 days`);
    }
    offset = PART.lastIndex;
  }
  return total;
}

/** The canonical spelling of a number of milliseconds: `5400000` → `1h30m`, `0` → `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`formatDuration: ${ms} is not a non-negative integer`);
  if (ms === 0) return "0s";
  let rest = ms;
  let text = "";
  for (const unit of UNIT_ORDER) {
    const size = UNIT_MS[unit];
    const amount = Math.floor(rest / size);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * size;
  }
  return text;
}

/** Milliseconds of `text`, or undefined when it is not a duration (for callers with their own message). */
export function tryParseDuration(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch (error) {
    if (error instanceof DurationError) return undefined;
    throw error;
  }
}
