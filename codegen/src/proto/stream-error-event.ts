import type { DescField, DescMessage, DescMethod } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import { GenerationError } from "../generation-error.js";

/**
 * Checks (platform.api.v1.stream_error_event) of a method and returns the fields its path names,
 * outermost first. The path goes from the stream's output message through a member of one of its
 * oneofs (the stream's "what happened" choice, such as `failed`) and on through singular message
 * fields to a singular string field, which receives the error's message. A oneof member is
 * required so the folded message is told apart from every other message of the stream by which
 * member is set, not by a convention about field values.
 */
export function streamErrorEventFields(method: DescMethod, path: string): DescField[] {
  const where = `rpc ${method.parent.typeName}.${method.name}: (platform.api.v1.stream_error_event) "${path}"`;
  if (method.methodKind !== "server_streaming") {
    throw new GenerationError(`${where} is only for server streams`);
  }
  const fields: DescField[] = [];
  let message: DescMessage = method.output;
  const names = path.split(".");
  for (const [index, name] of names.entries()) {
    const field = message.fields.find((f) => f.name === name);
    if (!field) {
      throw new GenerationError(
        `${where}: ${message.typeName} has no field "${name}" (proto field names, dot-separated)`,
      );
    }
    fields.push(field);
    if (index === names.length - 1) break;
    if (field.fieldKind !== "message") {
      throw new GenerationError(`${where}: "${field.name}" must be a singular message field to lead further`);
    }
    message = field.message;
  }
  const first = fields[0]!;
  if (!first.oneof) {
    throw new GenerationError(
      `${where}: the path must start with a member of a oneof of ${method.output.typeName}; "${first.name}" is not one`,
    );
  }
  const last = fields.at(-1)!;
  if (last.fieldKind !== "scalar" || last.scalar !== ScalarType.STRING) {
    throw new GenerationError(`${where}: the path must end at a singular string field; "${last.name}" is not one`);
  }
  return fields;
}

/** The JSON names of a path's fields, dot-separated (`failed.error`), as a document shows them. */
export function jsonPathOf(fields: readonly DescField[]): string {
  return fields.map((field) => field.jsonName).join(".");
}
