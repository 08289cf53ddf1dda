/** S3's limit on a key, in UTF-8 bytes: a key valid here stays valid in an S3-compatible store. */
export const MAX_BLOB_KEY_BYTES = 1024;

/** Why a key, a prefix or a content type was refused; the message names what is wrong. */
export class BlobKeyError extends Error {
  override name = "BlobKeyError";
}

/**
 * Checks an object key: `/`-separated segments, none empty, `.` or `..`, no backslash or control
 * character. Every store lays keys out as paths or URLs, so these rules are what keeps a key from
 * escaping its prefix or the store's root, whatever the store.
 */
export function checkBlobKey(key: string): string {
  const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
  if (key === "") throw new BlobKeyError("object key must not be empty");
  if (Buffer.byteLength(key) > MAX_BLOB_KEY_BYTES)
    throw new BlobKeyError(`object key ${shown} is longer than ${MAX_BLOB_KEY_BYTES} bytes`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(key))
    throw new BlobKeyError(`object key ${shown} contains a control character or a backslash`);
  if (key.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw new BlobKeyError(`object key ${shown} has an empty, "." or ".." segment (or a leading or trailing /)`);
  }
  return key;
}

/** Checks a folder prefix (`threads/<id>/`): a valid key followed by `/`. */
export function checkBlobPrefix(prefix: string): string {
  if (!prefix.endsWith("/")) throw new BlobKeyError(`prefix ${JSON.stringify(prefix)} must end with /`);
  checkBlobKey(prefix.slice(0, -1));
  return prefix;
}

/**
 * A media type as an HTTP header carries it (`type/subtype` and optional parameters, printable
 * ASCII): the stored type is sent back as Content-Type, so anything else could break or forge a
 * response header.
 */
export function checkContentType(contentType: string): string {
  const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
  if (contentType.length > 255 || !new RegExp(`^${token}/${token}(?:[ \\t]*;[\\x20-\\x7e]*)?$`).test(contentType)) {
    throw new BlobKeyError(
      `content type ${JSON.stringify(contentType.slice(0, 80))} is not a media type such as text/plain`,
    );
  }
  return contentType;
}

/** The key as a URL path: each segment percent-encoded, so any valid key survives the trip. */
export function blobKeyToUrlPath(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
}

/** The key a URL path names, or undefined when the path cannot be one (bad escapes, bad segments). */
export function blobKeyFromUrlPath(path: string): string | undefined {
  try {
    return checkBlobKey(path.split("/").map(decodeURIComponent).join("/"));
  } catch {
    return undefined;
  }
}
