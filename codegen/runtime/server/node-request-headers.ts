import type { IncomingHttpHeaders } from "node:http";
import type { IncomingHttpHeaders as IncomingHttp2Headers } from "node:http2";

/** A header name Headers accepts: an RFC 9110 token. Anything else takes Headers' own path, which refuses it. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** HTTP whitespace (Fetch): what Headers strips from both ends of a value. */
const isHttpWhitespace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

function normalizeValue(value: string): string {
  if (value === "") return value;
  if (!isHttpWhitespace(value.charCodeAt(0)) && !isHttpWhitespace(value.charCodeAt(value.length - 1))) return value;
  return value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
}

/**
 * A request's headers as a Fetch `Headers`, read from node's own (already lower-cased) header
 * object: `get` and `has` answer from it directly, and the Headers list is filled only when
 * something iterates, copies or changes it. Copying every header into a Headers on each request
 * (validating each name and value) cost about 2 µs a call, while a call reads two or three of
 * them. What any method answers is what a Headers filled at once would: pseudo-headers (`:path`)
 * are left out, a repeated header reads as its values joined by `, `, values lose surrounding
 * whitespace, and a name that is not a token is refused by Headers itself.
 */
export class NodeRequestHeaders extends Headers {
  /** Node's headers, until the list is filled from them. */
  #incoming: IncomingHttpHeaders | IncomingHttp2Headers | undefined;

  constructor(incoming: IncomingHttpHeaders | IncomingHttp2Headers) {
    super();
    this.#incoming = incoming;
  }

  #fill(): void {
    const incoming = this.#incoming;
    if (incoming === undefined) return;
    this.#incoming = undefined;
    for (const name in incoming) {
      const value = incoming[name];
      // HTTP/2 pseudo-headers (":path") are the request line, not headers.
      if (value === undefined || name.startsWith(":") || !Object.hasOwn(incoming, name)) continue;
      if (Array.isArray(value)) for (const item of value) super.append(name, item);
      else super.set(name, value);
    }
  }

  /** Node's value for a valid name, as `get` answers it; undefined when the list must answer. */
  #lookup(name: string): string | null | undefined {
    const incoming = this.#incoming;
    if (incoming === undefined || !TOKEN.test(name)) return undefined;
    const value = incoming[name.toLowerCase()];
    if (typeof value === "string") return normalizeValue(value);
    if (Array.isArray(value) && value.length > 0) return value.map(normalizeValue).join(", ");
    return null;
  }

  override get(name: string): string | null {
    const value = this.#lookup(name);
    if (value !== undefined) return value;
    this.#fill();
    return super.get(name);
  }

  override has(name: string): boolean {
    const value = this.#lookup(name);
    if (value !== undefined) return value !== null;
    this.#fill();
    return super.has(name);
  }

  override set(name: string, value: string): void {
    this.#fill();
    super.set(name, value);
  }

  override append(name: string, value: string): void {
    this.#fill();
    super.append(name, value);
  }

  override delete(name: string): void {
    this.#fill();
    super.delete(name);
  }

  override getSetCookie(): string[] {
    this.#fill();
    return super.getSetCookie();
  }

  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#fill();
    super.forEach(callback, thisArg);
  }

  override entries(): HeadersIterator<[string, string]> {
    this.#fill();
    return super.entries();
  }

  override keys(): HeadersIterator<string> {
    this.#fill();
    return super.keys();
  }

  override values(): HeadersIterator<string> {
    this.#fill();
    return super.values();
  }

  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    this.#fill();
    return super[Symbol.iterator]();
  }
}
