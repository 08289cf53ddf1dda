/**
 * Debian package versions, `[epoch:]upstream[-revision]`, ordered as Debian policy 5.6.12 and
 * dpkg order them. The upstream part may itself hold hyphens: the revision is what follows the
 * last one. A version without an epoch has epoch 0; one without a revision has the empty revision.
 */
export interface DpkgVersion {
  readonly epoch: number;
  readonly upstream: string;
  readonly revision: string;
}

export function parseDpkgVersion(text: string): DpkgVersion {
  const version = text.trim();
  const colon = version.indexOf(":");
  let epoch = 0;
  let rest = version;
  if (colon > 0 && /^[0-9]+$/.test(version.slice(0, colon))) {
    epoch = Number(version.slice(0, colon));
    rest = version.slice(colon + 1);
  }
  const hyphen = rest.lastIndexOf("-");
  return hyphen < 0
    ? { epoch, upstream: rest, revision: "" }
    : { epoch, upstream: rest.slice(0, hyphen), revision: rest.slice(hyphen + 1) };
}

/** Negative when `a` sorts before `b`, zero when they are equal, positive after. */
export function compareDpkgVersions(a: string, b: string): number {
  const left = parseDpkgVersion(a);
  const right = parseDpkgVersion(b);
  if (left.epoch !== right.epoch) return left.epoch < right.epoch ? -1 : 1;
  return compareDpkgPart(left.upstream, right.upstream) || compareDpkgPart(left.revision, right.revision);
}

/**
 * Compares an upstream version or a revision: alternating runs of non-digits, compared character
 * by character in dpkg's order, and runs of digits, compared as numbers (an absent run is 0).
 */
export function compareDpkgPart(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // The non-digit run: compared position by position, the end of a run counting as weight 0.
    while ((i < a.length && !isDigit(a[i]!)) || (j < b.length && !isDigit(b[j]!))) {
      const left = i < a.length && !isDigit(a[i]!) ? charWeight(a[i]!) : 0;
      const right = j < b.length && !isDigit(b[j]!) ? charWeight(b[j]!) : 0;
      if (left !== right) return left < right ? -1 : 1;
      if (i < a.length && !isDigit(a[i]!)) i++;
      if (j < b.length && !isDigit(b[j]!)) j++;
    }
    const leftStart = i;
    while (i < a.length && isDigit(a[i]!)) i++;
    const rightStart = j;
    while (j < b.length && isDigit(b[j]!)) j++;
    const order = compareDigitRuns(a.slice(leftStart, i), b.slice(rightStart, j));
    if (order !== 0) return order;
  }
  return 0;
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

/** `~` before the end of the part, the end before letters, letters before every other character. */
function charWeight(c: string): number {
  if (c === "~") return -1;
  if ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z")) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

/** Compares digit strings as numbers of any length (leading zeros ignored, empty is 0). */
export function compareDigitRuns(a: string, b: string): number {
  const left = a.replace(/^0+/, "");
  const right = b.replace(/^0+/, "");
  if (left.length !== right.length) return left.length < right.length ? -1 : 1;
  return left < right ? -1 : left > right ? 1 : 0;
}
