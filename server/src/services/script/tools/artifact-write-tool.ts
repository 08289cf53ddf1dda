import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import type { JsonObject, Tool } from "./tool.js";

export const MAX_ARTIFACT_NAME_LENGTH = 512;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * `artifact.write`: stores a file of the thread in object storage through the context. Text
 * content is stored as UTF-8; binary content comes as base64 (standard, or url-safe without
 * padding). Names are relative paths (`reports/summary.md`): no leading `/`, no empty, `.` or `..`
 * segment, no backslash or control character, so a name can never escape the thread's prefix in
 * any store.
 */
export function createArtifactWriteTool(): Tool {
  return {
    name: "artifact.write",
    version: NATIVE_TOOL_VERSION,
    description:
      "Stores a file as an artifact of the thread (writing the same name again replaces it). Give text content or base64 content.",
    inputs: [
      {
        name: "name",
        type: "string",
        required: true,
        description: `relative path such as reports/summary.md (at most ${MAX_ARTIFACT_NAME_LENGTH} characters)`,
      },
      {
        name: "contentType",
        type: "string",
        required: false,
        description:
          "media type; defaults to text/plain; charset=utf-8 for content and application/octet-stream for contentBase64",
      },
      {
        name: "content",
        type: "string",
        required: false,
        description: "text content, stored as UTF-8; give this or contentBase64",
      },
      {
        name: "contentBase64",
        type: "string",
        required: false,
        description: "binary content in base64; give this or content",
      },
    ],
    outputs: [
      { name: "name", type: "string", required: true, description: "the artifact's name" },
      { name: "sizeBytes", type: "integer", required: true, description: "bytes stored" },
    ],
    runtime: nativeRuntime("artifactWrite", 5 * 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input, context) {
      const name = checkName(String(input.name));
      const { bytes, defaultType } = content(input);
      const contentType =
        typeof input.contentType === "string" && input.contentType.trim() !== ""
          ? input.contentType.trim()
          : defaultType;
      await context.writeArtifact(name, contentType, bytes);
      return { name, sizeBytes: bytes.byteLength };
    },
  };
}

function checkName(name: string): string {
  const bad = (why: string) => invalidInput(`artifact.write: name ${JSON.stringify(name.slice(0, 80))} ${why}`);
  if (name === "") throw invalidInput("artifact.write: name must not be empty");
  if (name.length > MAX_ARTIFACT_NAME_LENGTH) throw bad(`is longer than ${MAX_ARTIFACT_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(name)) throw bad("contains a control character or a backslash");
  if (name.startsWith("/")) throw bad("must be relative (no leading /)");
  if (name.split("/").some((segment) => segment === "" || segment === "." || segment === ".."))
    throw bad('has an empty, "." or ".." segment');
  return name;
}

function content(input: JsonObject): { bytes: Uint8Array; defaultType: string } {
  const text = input.content;
  const base64 = input.contentBase64;
  if ((text === undefined) === (base64 === undefined))
    throw invalidInput("artifact.write: give exactly one of content and contentBase64");
  if (typeof text === "string") return { bytes: Buffer.from(text, "utf8"), defaultType: "text/plain; charset=utf-8" };
  const encoded = String(base64).replace(/\s+/g, "");
  if (!BASE64.test(encoded) && !BASE64URL.test(encoded))
    throw invalidInput("artifact.write: contentBase64 is not valid base64");
  return {
    bytes: Buffer.from(encoded, BASE64.test(encoded) ? "base64" : "base64url"),
    defaultType: "application/octet-stream",
  };
}
