/**
 * The public text of a schema comment. Proto comments record where a design choice came from
 * ("Not shown in the specification; following Airbyte's ..."), as the design asks of every
 * choice the specification leaves open; a published OpenAPI document describes the API only, so
 * those remarks are cut: the marker clause, parentheticals and clauses naming a source, and
 * sentences about the specification. A sentence that states behaviour keeps that behaviour.
 */
export function publicDescription(text: string): string {
  let out = text;
  // "(… not shown in the specification …)", "(following AIP-158)", "(as in Kubernetes lists)".
  out = out.replace(
    /\s*\([^()]*\b(?:specification|following [A-Z]|AIP-\d+|modell?ed on|as in [A-Z][a-z])[^()]*\)/g,
    "",
  );
  // The marker clause: the rest of its sentence is the public rule.
  out = out.replace(
    /\b[Nn]ot shown in the specification(?: \([^)]*\))?(?: for [^;:,.]*)?(?:[;:,]\s*|\.(?=\s|$)\s*)/g,
    CUT,
  );
  // "following AIP-158, 0 means …" at the start of a sentence: the rule without its source.
  out = out.replace(
    /(^|[.;:]\s+|\n\s*|\uE000)(?:[Ff]ollowing|[Mm]odell?ed on|[Aa]s in) [^,.;:\n]*(?:\n[^,.;:\n]*)?,\s+/g,
    `$1${CUT}`,
  );
  // "…, following Zilliz Cloud's MODIFYING." and "…, as AIP-133 creates under the parent.".
  out = out.replace(
    /,\s+(?:following|modell?ed\s+on|as\s+in|as)\s+(?:AIP-\d+|Google\s+AIP-\d+|[A-Z])(?:[^.;:)]|\.(?=\S))*(?=[.;:)])/g,
    "",
  );
  // "we follow Temporal: cancelling …" and "replay and end of stream follow Temporal's …: the stream …".
  out = out.replace(/\s+we\s+follow\s+[A-Z](?:[^.;:]|\.(?=\S))*:/g, ":");
  out = out.replace(/(^|[.;]\s+|\uE000)(?:[^.;:]|\.(?=\S))*\s+follows?\s+[A-Z](?:[^.;:]|\.(?=\S))*:\s+/g, `$1${CUT}`);
  let afterDropped = false;
  return sentences(out)
    .map((s) => {
      // A sentence after a dropped one that ended in ";" now starts its own.
      const text = afterDropped ? CUT + s.text : s.text;
      const dropped = provenance.test(s.text.replace(CUT_ALL, ""));
      afterDropped = dropped && /;\s*$/.test(s.text);
      return dropped ? { text: listPrefix(s.text), gap: s.gap } : { text, gap: s.gap };
    })
    .filter((s) => s.text.replace(CUT_ALL, "").trim() !== "")
    .map((s, i, kept) => (i === kept.length - 1 ? s.text.replace(/;$/, ".") : s.text) + s.gap)
    .join("")
    .replace(/\uE000+\s*([a-z])?/g, (_m, letter: string | undefined) => letter?.toUpperCase() ?? "")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Where a cut left the start of a sentence, whose first letter becomes a capital. */
const CUT = "\uE000";
const CUT_ALL = /\uE000/g;

/** What stays of a list item's first sentence when the sentence goes: the item and its name. */
function listPrefix(sentence: string): string {
  return /^\s*- (?:`[^`]*`)?/.exec(sentence)?.[0] ?? "";
}

/** A sentence about the specification, or one that only names a source. */
const provenance =
  /\bspecification\b|\bspec\b|grpc-gateway|\bnot shown\b|\bfollowing\s+[A-Z][a-z]+'s\b|\bfollows?\s+(?:the\s+)?[A-Z][a-z]|^\s*(?:- (?:`[^`]*`:? )?)?(?:[Ff]ollowing|[Mm]odell?ed on|[Dd]esigned like|[Aa]s in [A-Z]|(?:Google )?AIP-\d+)\b/;

interface Sentence {
  readonly text: string;
  /** The whitespace after it, kept so line and list structure survive. */
  readonly gap: string;
}

/** Splits after `.`, `;`, `!` or `?` and whitespace, and before list items and paragraphs. */
function sentences(text: string): Sentence[] {
  const parts: Sentence[] = [];
  const boundary = /(?<=[.;!?])(\s+)|(\n+)(?=- |\n)|(\n\n+)/g;
  let start = 0;
  for (let m = boundary.exec(text); m !== null; m = boundary.exec(text)) {
    parts.push({ text: text.slice(start, m.index), gap: m[0] });
    start = m.index + m[0].length;
  }
  parts.push({ text: text.slice(start), gap: "" });
  return parts;
}
