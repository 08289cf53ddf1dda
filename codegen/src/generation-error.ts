/** A contract the generator refuses: the message names the proto element and the rule broken. */
export class GenerationError extends Error {
  override name = "GenerationError";
}
