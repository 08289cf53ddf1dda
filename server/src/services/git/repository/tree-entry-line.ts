/** One entry of `git ls-tree -l -z` output. */
export interface TreeEntryLine {
  mode: string;
  type: string;
  object: string;
  /** Undefined for trees and submodules, which ls-tree prints as `-`. */
  size: number | undefined;
  /** The path as ls-tree printed it (relative to the root). */
  path: string;
}

/** Parses `<mode> SP <type> SP <object> SP+ <size> TAB <path>` records separated by NUL. */
export function parseTreeEntryLines(output: string): TreeEntryLine[] {
  const entries: TreeEntryLine[] = [];
  for (const record of output.split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    const match = /^(\d+) (\w+) ([0-9a-f]+) +(-|\d+)$/.exec(record.slice(0, tab));
    if (tab < 0 || match === null) continue;
    const [, mode = "", type = "", object = "", size = "-"] = match;
    entries.push({ mode, type, object, size: size === "-" ? undefined : Number(size), path: record.slice(tab + 1) });
  }
  return entries;
}
