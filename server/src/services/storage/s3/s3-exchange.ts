import type { Principal } from "../../../auth/principal.js";
import type { NodeRequest, NodeResponse } from "../../../transport/plane-handler.js";
import { S3Error } from "./s3-error.js";
import { S3_NAMESPACE, XmlWriter } from "./s3-xml.js";

/** One authenticated S3 request, as the operations see it. */
export interface S3Exchange {
  readonly request: NodeRequest;
  readonly response: NodeResponse;
  readonly method: string;
  /** Empty for the service root (ListBuckets). */
  readonly bucket: string;
  /** Empty for bucket operations. */
  readonly key: string;
  readonly query: URLSearchParams;
  readonly caller: Principal;
  readonly requestId: string;
  /** The body, decoded and verified as it is read (s3-request-body.ts). */
  body(): AsyncGenerator<Uint8Array>;
}

export function header(exchange: S3Exchange, name: string): string | undefined {
  const value = exchange.request.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** Answers an XML document whose root element `root` is filled by `fill`. */
export function sendXml(exchange: S3Exchange, status: number, root: string, fill: (xml: XmlWriter) => void): void {
  const xml = new XmlWriter();
  xml.element(root, () => fill(xml), S3_NAMESPACE);
  const body = Buffer.from(xml.toString(), "utf8");
  const { response } = exchange;
  response.statusCode = status;
  response.setHeader("content-type", "application/xml");
  response.setHeader("content-length", String(body.length));
  response.end(body);
}

/** Answers with no body. */
export function sendEmpty(exchange: S3Exchange, status: number, headers: Record<string, string> = {}): void {
  const { response } = exchange;
  response.statusCode = status;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  response.setHeader("content-length", "0");
  response.end();
}

/** The error document S3 sends; a HEAD answer carries the status only, as S3's does. */
export function sendError(
  response: NodeResponse,
  method: string,
  error: S3Error,
  resource: string,
  requestId: string,
): void {
  response.statusCode = error.status;
  if (method === "HEAD") {
    response.setHeader("content-length", "0");
    response.end();
    return;
  }
  const xml = new XmlWriter();
  xml.element("Error", () => {
    xml.text("Code", error.code).text("Message", error.message);
    for (const [name, value] of Object.entries(error.details)) xml.text(name, value);
    xml.text("Resource", resource).text("RequestId", requestId);
  });
  const body = Buffer.from(xml.toString(), "utf8");
  response.setHeader("content-type", "application/xml");
  response.setHeader("content-length", String(body.length));
  response.end(body);
}

/** S3's quoted entity tag. */
export const quoted = (etag: string) => `"${etag}"`;

/** `x-amz-meta-*` headers as stored metadata; S3's 2 KB limit on their total size. */
export function metadataOf(exchange: S3Exchange): Record<string, string> {
  const metadata: Record<string, string> = {};
  let size = 0;
  for (const [name, value] of Object.entries(exchange.request.headers)) {
    if (!name.startsWith("x-amz-meta-") || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(",") : value;
    const short = name.slice("x-amz-meta-".length);
    size += short.length + Buffer.byteLength(text);
    metadata[short] = text;
  }
  if (size > 2048)
    throw new S3Error("MetadataTooLarge", "your metadata headers exceed the maximum allowed metadata size of 2 KB");
  return metadata;
}

/** S3 answers with the type it was given, or binary/octet-stream; it must be a header-safe string. */
export function contentTypeOf(exchange: S3Exchange): string {
  const value = header(exchange, "content-type") ?? "binary/octet-stream";
  if (value.length > 1024 || !/^[\x20-\x7e]*$/.test(value))
    throw new S3Error("InvalidArgument", "Content-Type: must be printable ASCII of at most 1024 characters");
  return value;
}

/** A non-negative integer query parameter with a default and a ceiling (max-keys, max-parts…). */
export function integerParam(exchange: S3Exchange, name: string, fallback: number, max: number): number {
  const text = exchange.query.get(name);
  if (text === null || text === "") return fallback;
  if (!/^[0-9]+$/.test(text)) throw new S3Error("InvalidArgument", `${name}: must be a non-negative integer`);
  return Math.min(Number(text), max);
}
