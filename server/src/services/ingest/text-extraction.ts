import { pdfText } from "./pdf-text.js";
import { UnsupportedContentError } from "./unsupported-content.js";

/**
 * Turns an object's bytes into the text an index template chunks and embeds (and actions read).
 * Text families are decoded as UTF-8 (a byte-order mark dropped); HTML keeps its visible text,
 * without scripts, styles and markup; PDF gives the text of its pages (pdf-text.ts). Anything else
 * (images, archives) has no extractor: the object fails with a message naming its type, and the
 * rest of the job goes on.
 */

export { UnsupportedContentError };

const TEXT_TYPES = new Set([
  "application/json",
  "application/x-ndjson",
  "application/jsonl",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/javascript",
  "application/typescript",
  "application/sql",
  "application/toml",
]);

const TEXT_EXTENSIONS =
  /\.(txt|md|markdown|mdx|rst|csv|tsv|json|jsonl|ndjson|ya?ml|xml|toml|ini|log|js|mjs|cjs|ts|tsx|jsx|py|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|sql|css|scss|tex)$/i;
const HTML_EXTENSIONS = /\.(html?|xhtml)$/i;

/**
 * The media type to record for an object: its stored type, or when it has none one guessed from
 * the key, or from the bytes when given (a PDF starts with `%PDF-`, whatever it is called).
 */
export function mediaTypeOf(key: string, contentType: string, bytes?: Uint8Array): string {
  const stored = contentType.split(";")[0]!.trim().toLowerCase();
  if (stored !== "" && stored !== "application/octet-stream") return stored;
  if (HTML_EXTENSIONS.test(key)) return "text/html";
  if (/\.pdf$/i.test(key) || (bytes && startsWithPdfMagic(bytes))) return "application/pdf";
  if (/\.(md|markdown|mdx)$/i.test(key)) return "text/markdown";
  if (TEXT_EXTENSIONS.test(key)) return "text/plain";
  return stored === "" ? "application/octet-stream" : stored;
}

function startsWithPdfMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && new TextDecoder("latin1").decode(bytes.subarray(0, 5)) === "%PDF-";
}

export async function extractText(key: string, mediaType: string, bytes: Uint8Array): Promise<string> {
  if (mediaType === "application/pdf" || mediaType === "application/x-pdf") return pdfText(key, bytes);
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return htmlText(decodeUtf8(bytes));
  if (mediaType.startsWith("text/") || TEXT_TYPES.has(mediaType) || mediaType.endsWith("+json")) {
    return decodeUtf8(bytes);
  }
  throw new UnsupportedContentError(`${key}: no text extractor for ${mediaType}`);
}

function decodeUtf8(bytes: Uint8Array): string {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** The visible text of an HTML document: block elements become line breaks, entities are decoded. */
export function htmlText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|noscript|template|svg|head)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(
      /<(br|\/p|\/div|\/li|\/h[1-6]|\/tr|\/section|\/article|\/header|\/footer|\/pre|\/blockquote)\b[^>]*>/gi,
      "\n",
    )
    .replace(/<[^>]*>/g, " ")
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === "#") {
        const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t\f\v\r]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
