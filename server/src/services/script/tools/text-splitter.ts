/**
 * A recursive character splitter in the manner of LangChain's RecursiveCharacterTextSplitter: a
 * text longer than the chunk size is cut at the first separator (in the given order) that occurs
 * in it; pieces that fit are merged greedily into chunks with up to `chunkOverlap` characters of
 * the previous chunk repeated; a piece that does not fit is split again with the separators after
 * that one.
 *
 * Unlike LangChain, which drops the separator or strips whitespace, every chunk is an exact slice
 * `text.slice(start, end)` (a separator stays at the end of the piece before it), so the chunks
 * cover the whole text and their offsets point back into it. A character level (cutting anywhere,
 * never inside a surrogate pair) always ends the separator list, so no chunk is ever longer than
 * `chunkSize`, even when the given separators run out. Lengths and offsets are in UTF-16 code
 * units, as JavaScript's `String.length` counts them.
 */

export interface TextChunk {
  readonly index: number;
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

export interface SplitOptions {
  /** Largest chunk, in characters; at least 1. */
  readonly chunkSize: number;
  /** Characters consecutive chunks may share; less than chunkSize. */
  readonly chunkOverlap: number;
  /** Tried in order; the empty string means "between any two characters". */
  readonly separators: readonly string[];
}

/** Paragraph, line, sentence, word, character. */
export const DEFAULT_SEPARATORS: readonly string[] = ["\n\n", "\n", ". ", " ", ""];

interface Span {
  readonly start: number;
  readonly end: number;
}

export function splitText(text: string, options: SplitOptions): TextChunk[] {
  const { chunkSize, chunkOverlap } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new RangeError(`chunkSize must be a whole number of at least 1, got ${chunkSize}`);
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new RangeError(
      `chunkOverlap must be a whole number from 0 to chunkSize - 1 (${chunkSize - 1}), got ${chunkOverlap}`,
    );
  }
  if (text === "") return [];
  const separators = options.separators.includes("") ? options.separators : [...options.separators, ""];
  const spans = splitSpan(text, { start: 0, end: text.length }, separators, chunkSize, chunkOverlap);
  return spans.map((span, index) => ({
    index,
    text: text.slice(span.start, span.end),
    start: span.start,
    end: span.end,
  }));
}

function splitSpan(
  text: string,
  span: Span,
  separators: readonly string[],
  chunkSize: number,
  chunkOverlap: number,
): Span[] {
  if (span.end - span.start <= chunkSize) return [span];
  const at = separators.findIndex(
    (separator) => separator === "" || text.slice(span.start, span.end).includes(separator),
  );
  // `separators` always ends with "" (splitText sees to it), and "" matches any span.
  const separator = separators[at] ?? "";
  const rest = separators.slice(at + 1);
  const chunks: Span[] = [];
  let fitting: Span[] = [];
  for (const piece of pieces(text, span, separator, chunkSize)) {
    if (piece.end - piece.start <= chunkSize) {
      fitting.push(piece);
      continue;
    }
    chunks.push(...merge(fitting, chunkSize, chunkOverlap));
    fitting = [];
    chunks.push(...splitSpan(text, piece, rest, chunkSize, chunkOverlap));
  }
  chunks.push(...merge(fitting, chunkSize, chunkOverlap));
  return chunks;
}

/**
 * The pieces of `span` cut after each `separator`; with the empty separator, between code points
 * (between code units only when chunkSize is 1, the one size a surrogate pair cannot fit).
 */
function pieces(text: string, span: Span, separator: string, chunkSize: number): Span[] {
  const result: Span[] = [];
  let start = span.start;
  if (separator === "") {
    while (start < span.end) {
      const code = text.codePointAt(start) ?? 0;
      const end = Math.min(span.end, start + (code > 0xffff && chunkSize > 1 ? 2 : 1));
      result.push({ start, end });
      start = end;
    }
    return result;
  }
  while (start < span.end) {
    const found = text.indexOf(separator, start);
    const end = found === -1 || found + separator.length > span.end ? span.end : found + separator.length;
    result.push({ start, end });
    start = end;
  }
  return result;
}

/**
 * Greedy merge of adjacent pieces (each at most chunkSize) into chunks of at most chunkSize; when
 * a chunk is full, the next one starts with the last pieces of it that fit in chunkOverlap and
 * leave room for the next piece.
 */
function merge(pieces: readonly Span[], chunkSize: number, chunkOverlap: number): Span[] {
  const chunks: Span[] = [];
  const window: Span[] = [];
  let length = 0;
  for (const piece of pieces) {
    const size = piece.end - piece.start;
    if (window.length > 0 && length + size > chunkSize) {
      chunks.push(cover(window));
      while (window.length > 0 && (length > chunkOverlap || length + size > chunkSize)) {
        const dropped = window.shift() as Span;
        length -= dropped.end - dropped.start;
      }
    }
    window.push(piece);
    length += size;
  }
  if (window.length > 0) chunks.push(cover(window));
  return chunks;
}

function cover(window: readonly Span[]): Span {
  return { start: (window[0] as Span).start, end: (window[window.length - 1] as Span).end };
}
