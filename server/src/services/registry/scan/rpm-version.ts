import { compareDigitRuns } from "./dpkg-version.js";

/**
 * RPM versions, `[epoch:]version[-release]`, ordered as rpm's rpmvercmp orders each part:
 * separators (anything but letters, digits, `~` and `^`) only split segments; `~` sorts before
 * everything, even the end (1.0~rc1 < 1.0); `^` sorts after the end but before anything else
 * (1.0 < 1.0^git1 < 1.0.1); digit segments compare as numbers and beat letter segments; when one
 * side runs out, the longer side is newer. A missing epoch is 0.
 */
export function compareRpmVersions(a: string, b: string): number {
  const left = parseEvr(a);
  const right = parseEvr(b);
  return (
    compareDigitRuns(left.epoch, right.epoch) ||
    rpmvercmp(left.version, right.version) ||
    rpmvercmp(left.release, right.release)
  );
}

function parseEvr(text: string): { epoch: string; version: string; release: string } {
  const colon = text.indexOf(":");
  const hasEpoch = colon > 0 && /^[0-9]+$/.test(text.slice(0, colon));
  const epoch = hasEpoch ? text.slice(0, colon) : "0";
  const rest = hasEpoch ? text.slice(colon + 1) : text;
  const hyphen = rest.lastIndexOf("-");
  return hyphen < 0
    ? { epoch, version: rest, release: "" }
    : { epoch, version: rest.slice(0, hyphen), release: rest.slice(hyphen + 1) };
}

const isAlnum = (c: string | undefined) => c !== undefined && /[0-9A-Za-z]/.test(c);
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isAlpha = (c: string | undefined) => c !== undefined && /[A-Za-z]/.test(c);

/** One part (version or release) in rpm's order. */
export function rpmvercmp(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    while (i < a.length && !isAlnum(a[i]) && a[i] !== "~" && a[i] !== "^") i++;
    while (j < b.length && !isAlnum(b[j]) && b[j] !== "~" && b[j] !== "^") j++;
    if (a[i] === "~" || b[j] === "~") {
      if (a[i] !== "~") return 1;
      if (b[j] !== "~") return -1;
      i++;
      j++;
      continue;
    }
    if (a[i] === "^" || b[j] === "^") {
      if (i >= a.length) return -1;
      if (j >= b.length) return 1;
      if (a[i] !== "^") return 1;
      if (b[j] !== "^") return -1;
      i++;
      j++;
      continue;
    }
    if (i >= a.length || j >= b.length) break;
    const numeric = isDigit(a[i]);
    const inSegment = numeric ? isDigit : isAlpha;
    const leftStart = i;
    while (i < a.length && inSegment(a[i])) i++;
    const rightStart = j;
    while (j < b.length && inSegment(b[j])) j++;
    const left = a.slice(leftStart, i);
    const right = b.slice(rightStart, j);
    // Segments of different kinds: a number is newer than letters.
    if (right === "") return numeric ? 1 : -1;
    const order = numeric ? compareDigitRuns(left, right) : left < right ? -1 : left > right ? 1 : 0;
    if (order !== 0) return order;
  }
  if (i >= a.length && j >= b.length) return 0;
  return i >= a.length ? -1 : 1;
}
