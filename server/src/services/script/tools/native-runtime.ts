import type { ToolRuntime } from "./tool.js";

/**
 * When the current version of the native tool set was registered (ListTools `created_at_ms`). A
 * fixed date rather than the process start, so it does not change at every restart; bump it with
 * the version of a tool whose behaviour changes.
 */
export const NATIVE_TOOLS_CREATED_AT_MS = Date.UTC(2026, 10, 25);

export const NATIVE_TOOL_VERSION = "1";

/**
 * The runtime of a built-in tool: it runs in the server process (language `native`, no image, no
 * GPU), entered through the named function. Memory is 0, the platform default: an in-process call
 * has no memory limit of its own, and a number we do not enforce would mislead. A tool that does
 * enforce one (json.transform's worker heap) reports it instead.
 */
export function nativeRuntime(entrypoint: string, timeoutMs: number): ToolRuntime {
  return { entrypoint, language: "native", image: "", timeoutMs, memoryMiB: 0, gpu: "" };
}
