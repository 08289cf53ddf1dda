/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): a plain `filename` every client
 * reads, with characters outside printable ASCII replaced, and, when that lost anything, the
 * exact name as UTF-8 in `filename*` (RFC 8187), which current browsers prefer.
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]/g, "_");
  const quoted = `attachment; filename="${fallback.replace(/["\\]/g, "\\$&")}"`;
  if (fallback === fileName) return quoted;
  // encodeURIComponent leaves ' ( ) * unescaped, which RFC 8187's attr-char does not allow.
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${quoted}; filename*=UTF-8''${encoded}`;
}
