import contentDisposition from "content-disposition";

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): the last segment of the name, in
 * `filename` as printable ASCII (others replaced: a header's bytes outside ASCII are read
 * differently by different clients) and, when that lost anything, exactly as UTF-8 in `filename*`
 * (RFC 8187), which current browsers prefer.
 */
export function attachmentDisposition(fileName: string): string {
  return contentDisposition(fileName, { type: "attachment", fallback: fileName.replace(/[^\x20-\x7e]/g, "_") });
}
