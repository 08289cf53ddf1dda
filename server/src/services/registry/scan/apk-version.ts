import { compareDigitRuns } from "./dpkg-version.js";

/**
 * Alpine package versions: `number{.number}[letter]{_suffix[number]}[~hash][-r<revision>]`.
 * Pre-release suffixes (`_alpha`, `_beta`, `_pre`, `_rc`) sort before the plain release and
 * post-release ones (`_cvs`, `_svn`, `_git`, `_hg`, `_p`) after it. The first number compares as a
 * number; a later one with a leading zero compares as a decimal fraction (1.02 < 1.1), as apk does.
 */
export interface ApkVersion {
  readonly numbers: readonly string[];
  readonly letter: string;
  readonly suffixes: readonly { readonly rank: number; readonly number: string }[];
  readonly revision: string;
}

const SUFFIX_RANKS: Record<string, number> = { alpha: 0, beta: 1, pre: 2, rc: 3, cvs: 5, svn: 6, git: 7, hg: 8, p: 9 };
/** The rank of "no suffix": between the pre-release and the post-release ones. */
const RELEASE_RANK = 4;

const APK_VERSION =
  /^([0-9]+(?:\.[0-9]+)*)([a-z]?)((?:_(?:alpha|beta|pre|rc|cvs|svn|git|hg|p)[0-9]*)*)(?:~[0-9a-f]+)?(?:-r([0-9]+))?$/;

/** The parsed version, or undefined when `text` is not a valid apk version. */
export function parseApkVersion(text: string): ApkVersion | undefined {
  const match = APK_VERSION.exec(text.trim());
  if (!match) return undefined;
  const suffixes = [...match[3]!.matchAll(/_([a-z]+)([0-9]*)/g)].map((m) => ({
    rank: SUFFIX_RANKS[m[1]!]!,
    number: m[2]!,
  }));
  return { numbers: match[1]!.split("."), letter: match[2]!, suffixes, revision: match[4] ?? "0" };
}

/** Negative when `a` sorts before `b`, zero when equal, positive after; invalid versions sort as text after valid ones. */
export function compareApkVersions(a: string, b: string): number {
  const left = parseApkVersion(a);
  const right = parseApkVersion(b);
  if (!left || !right) {
    if (left) return -1;
    if (right) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const count = Math.max(left.numbers.length, right.numbers.length);
  for (let i = 0; i < count; i++) {
    const x = left.numbers[i];
    const y = right.numbers[i];
    // 1.2.1 is after 1.2 (and after 1.2a, 1.2_p1): one more number outweighs what follows.
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const order = i > 0 && (x.startsWith("0") || y.startsWith("0")) ? compareText(x, y) : compareDigitRuns(x, y);
    if (order !== 0) return order;
  }
  if (left.letter !== right.letter) return compareText(left.letter, right.letter);
  const suffixCount = Math.max(left.suffixes.length, right.suffixes.length);
  for (let i = 0; i < suffixCount; i++) {
    const x = left.suffixes[i] ?? { rank: RELEASE_RANK, number: "" };
    const y = right.suffixes[i] ?? { rank: RELEASE_RANK, number: "" };
    if (x.rank !== y.rank) return x.rank < y.rank ? -1 : 1;
    const order = compareDigitRuns(x.number, y.number);
    if (order !== 0) return order;
  }
  return compareDigitRuns(left.revision, right.revision);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
