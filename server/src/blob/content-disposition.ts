import contentDisposition from "content-disposition";

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): the last segment of the name in
 * `filename` (ISO-8859-1, others replaced), and the exact name as UTF-8 in `filename*` (RFC 8187)
 * when the plain one had to lose characters.
 */
export function attachmentDisposition(fileName: string): string {
  return contentDisposition(fileName, { type: "attachment" });
}
