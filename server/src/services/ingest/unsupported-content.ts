/** An object whose bytes have no text extractor, or that its extractor cannot read: the object fails for good. */
export class UnsupportedContentError extends Error {
  override name = "UnsupportedContentError";
}
