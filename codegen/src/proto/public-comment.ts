import { commentOf } from "./binding-model.js";
import { publicDescription } from "../public-description.js";

/** A descriptor's comment as the OpenAPI documents and the SDK clients publish it: without its internal `(-- … --)` remarks. */
export function publicComment(desc: Parameters<typeof commentOf>[0]): string {
  return publicDescription(commentOf(desc));
}
