/** The media type of a Content-Type value: lower case, without parameters; `""` when there is none. */
export function mediaTypeOf(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

/** `application/json` and the `+json` structured-syntax suffix (RFC 6839). */
export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}

export function isFormMediaType(mediaType: string): boolean {
  return mediaType === "application/x-www-form-urlencoded";
}

export function isTextMediaType(mediaType: string): boolean {
  return mediaType.startsWith("text/");
}

/** The Content-Type to send for a media type: text is always UTF-8 here, so say so. */
export function contentTypeFor(mediaType: string): string {
  return isTextMediaType(mediaType) ? `${mediaType}; charset=utf-8` : mediaType;
}
