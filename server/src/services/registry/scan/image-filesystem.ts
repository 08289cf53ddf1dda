import { posix } from "node:path";
import type { TarEntry } from "./tar-entries.js";

/** What the scanner keeps of a file it looks for: its bytes, or where its symbolic link points. */
export type ScannedFile =
  { readonly kind: "file"; readonly content: Buffer } | { readonly kind: "link"; readonly target: string };

const WHITEOUT_PREFIX = ".wh.";
const OPAQUE_MARKER = ".wh..wh..opq";

/**
 * The few files of an image the scanner reads (package databases, os-release), as the image's
 * layers leave them: each layer applied over the ones below with the OCI whiteout rules, so a later
 * layer's deletion or replacement of a database wins. Nothing else of a layer is kept.
 */
export class ImageFilesystem {
  readonly #files = new Map<string, ScannedFile>();
  readonly #wanted: (path: string) => boolean;

  constructor(wanted: (path: string) => boolean) {
    this.#wanted = wanted;
  }

  /** Applies one layer's entries, in archive order, over the layers below. */
  async applyLayer(entries: AsyncIterable<TarEntry>): Promise<void> {
    /** Paths removed from the layers below: a whiteout, an opaque folder, or a non-folder over a folder. */
    const removed: { readonly path: string; readonly subtree: boolean; readonly self: boolean }[] = [];
    const added = new Map<string, ScannedFile>();
    for await (const entry of entries) {
      const name = posix.basename(entry.path);
      const parent = posix.dirname(entry.path);
      if (name === OPAQUE_MARKER) {
        removed.push({ path: parent === "." ? "" : parent, subtree: true, self: false });
        continue;
      }
      if (name.startsWith(WHITEOUT_PREFIX)) {
        const target = posix.join(parent, name.slice(WHITEOUT_PREFIX.length));
        removed.push({ path: target, subtree: true, self: true });
        continue;
      }
      // A file or link where a folder was hides the folder's content below; recorded only when it
      // hides a kept file, so a layer of many files costs nothing here.
      if (entry.type !== "directory" && [...this.#files.keys()].some((p) => isUnder(p, entry.path)))
        removed.push({ path: entry.path, subtree: true, self: false });
      if (!this.#wanted(entry.path)) continue;
      if (entry.type === "file" && entry.content) added.set(entry.path, { kind: "file", content: entry.content });
      else if (entry.type === "symlink") added.set(entry.path, { kind: "link", target: entry.linkName });
      else if (entry.type === "hardlink") {
        const target = added.get(entry.linkName) ?? this.#files.get(entry.linkName);
        if (target) added.set(entry.path, target);
      }
    }
    for (const path of [...this.#files.keys()]) {
      if (removed.some((r) => (r.self && path === r.path) || (r.subtree && isUnder(path, r.path)))) {
        this.#files.delete(path);
      }
    }
    for (const [path, file] of added) this.#files.set(path, file);
  }

  /** The content at `path`, following symbolic links among the kept files; undefined when absent. */
  read(path: string): Buffer | undefined {
    let current = path;
    for (let hops = 0; hops < 8; hops++) {
      const file = this.#files.get(current);
      if (!file) return undefined;
      if (file.kind === "file") return file.content;
      current = posix.normalize(
        file.target.startsWith("/") ? file.target.slice(1) : posix.join(posix.dirname(current), file.target),
      );
    }
    return undefined;
  }

  /** The kept regular files directly in folder `dir`, by path order. */
  list(dir: string): string[] {
    return [...this.#files.keys()].filter((p) => posix.dirname(p) === dir).sort();
  }
}

function isUnder(path: string, dir: string): boolean {
  return dir === "" || path.startsWith(`${dir}/`);
}
