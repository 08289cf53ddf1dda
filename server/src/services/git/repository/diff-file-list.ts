/** The diff file record, before patches are attached. */
export interface DiffFile {
  path: string;
  old_path?: string;
  status: "added" | "deleted" | "modified" | "renamed";
  additions: number;
  deletions: number;
  patch?: string;
  binary: boolean;
}

const STATUS: Record<string, DiffFile["status"]> = { A: "added", D: "deleted", R: "renamed" };

/**
 * Parses `diff-tree -r -z -M --raw --numstat`: first one raw record per file (`:modes shas STATUS`, then
 * one path, or two for a rename or copy), then one numstat record per file in the same order
 * (`adds TAB dels TAB path`, or `adds TAB dels TAB` then the two paths). Binary files count `-`.
 */
export function parseDiffFileList(output: string): DiffFile[] {
  const tokens = output.split("\0");
  const files: DiffFile[] = [];
  let at = 0;
  while (at < tokens.length && tokens[at]?.startsWith(":")) {
    const letter = (tokens[at] ?? "").split(" ").at(-1)?.charAt(0) ?? "M";
    const twoPaths = letter === "R" || letter === "C";
    const first = tokens[at + 1] ?? "";
    const second = tokens[at + 2] ?? "";
    at += twoPaths ? 3 : 2;
    const file: DiffFile = {
      path: twoPaths ? second : first,
      // A copy (only with -C, not asked for) reads best as an added file.
      status: letter === "C" ? "added" : (STATUS[letter] ?? "modified"),
      additions: 0,
      deletions: 0,
      binary: false,
    };
    if (letter === "R") file.old_path = first;
    files.push(file);
  }
  for (const file of files) {
    const [adds = "", dels = "", path = ""] = (tokens[at] ?? "").split("\t");
    // With -z a rename's numstat record has an empty path and the two names in the next tokens.
    at += path === "" ? 3 : 1;
    if (adds === "-" && dels === "-") file.binary = true;
    else {
      file.additions = Number(adds) || 0;
      file.deletions = Number(dels) || 0;
    }
  }
  return files;
}
