/**
 * A small writer of S3's XML answers: elements are nested through callbacks, text is escaped, and
 * names are the code's own constants (never input), so no answer can be malformed by what a client
 * stored in a key or its metadata.
 */
export class XmlWriter {
  private readonly parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];

  /** An element with children; the root carries S3's namespace. */
  element(name: string, children: () => void, attributes = ""): this {
    this.parts.push(`<${name}${attributes}>`);
    children();
    this.parts.push(`</${name}>`);
    return this;
  }

  /** An element holding text; undefined writes nothing, as S3 leaves optional fields out. */
  text(name: string, value: string | number | boolean | undefined): this {
    if (value === undefined) return this;
    this.parts.push(`<${name}>${escapeXml(String(value))}</${name}>`);
    return this;
  }

  toString(): string {
    return this.parts.join("");
  }
}

export const S3_NAMESPACE = ' xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';

/**
 * Escapes text for element content. Characters XML 1.0 cannot carry at all (most control
 * characters) are written as character references anyway, as S3 does for keys, so that what a
 * client stored comes back whole; parsers of S3 answers (the AWS SDKs) read them.
 */
export function escapeXml(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is escaped
  return value.replace(/[<>&"'\u0000-\u0008\u000b\u000c\u000e-\u001f\r]/g, (c) => {
    switch (c) {
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case "&":
        return "&amp;";
      case '"':
        return "&quot;";
      case "'":
        return "&apos;";
      default:
        return `&#x${c.charCodeAt(0).toString(16)};`;
    }
  });
}

/** S3's timestamps in listings: ISO 8601 with milliseconds, UTC. */
export const isoTime = (epochMs: number): string => new Date(epochMs).toISOString();
