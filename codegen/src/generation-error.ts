/** A contract the generator refuses: the message names the element (proto or OpenAPI) and the rule broken. */
export class GenerationError extends Error {
  override name = "GenerationError";
}
