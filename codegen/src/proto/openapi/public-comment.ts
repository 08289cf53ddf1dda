import { commentOf } from "../binding-model.js";
import { publicDescription } from "../../public-description.js";

/** A descriptor's comment as an OpenAPI document publishes it: without remarks on where a choice came from. */
export function publicComment(desc: Parameters<typeof commentOf>[0]): string {
  return publicDescription(commentOf(desc));
}
