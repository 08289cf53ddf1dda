/**
 * The public text of a schema comment. Proto comments record where a design choice came from, as
 * the design asks of every choice the specification leaves open; a published OpenAPI document
 * describes the API only. Such remarks are marked internal the AIP-192 way, wrapped in `(--` and
 * `--)` (on one line or across lines), and this removes them, with the spaces and lines they
 * leave empty. A marker without its partner is an error: it would publish the remark it opens.
 */
export function publicDescription(text: string): string {
  const cut = text.replace(INTERNAL, HOLE);
  const stray = /\(--|--\)/.exec(cut);
  if (stray) {
    throw new Error(`unbalanced internal comment marker "${stray[0]}" in: ${text}`);
  }
  return cut
    .split("\n")
    .filter((line) => !(line.includes(HOLE) && line.replaceAll(HOLE, "").trim() === ""))
    .map((line) =>
      line
        // "Lists apps. (-- … --)" and "Foo (-- … --), bar": no space before what follows the hole.
        .replace(/[ \t]*\uE000+(?=[.,;:)]|$)/g, "")
        // A hole between words leaves one space; one at the start of a line leaves none.
        .replace(/[ \t]*\uE000+[ \t]*/g, (m, offset: number) => (offset === 0 ? "" : " "))
        .trimEnd(),
    )
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** An internal span, shortest first so two spans on one line stay two. */
const INTERNAL = /\(--[\s\S]*?--\)/g;

/** Where an internal span was. */
const HOLE = "\uE000";
