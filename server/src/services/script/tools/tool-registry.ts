import { decodePageToken, encodePageToken, pageSizeOf } from "../../../pagination/page-token.js";
import { formatDuration } from "../dsl/duration.js";
import { ToolError, toToolError } from "./tool-error.js";
import { checkToolInput } from "./tool-input.js";
import type { JsonValue, Tool, ToolContext } from "./tool.js";

/**
 * Where tools come from: the built-in native set is one source; compute apps published as tools
 * will be another. A source answers per organization, since compute tools belong to one.
 */
export interface ToolSource {
  listTools(orgId: string): Promise<readonly Tool[]>;
}

export interface ToolPage {
  /** 0 means the default of 50; values above 500 are lowered to 500 (ListToolsRequest). */
  readonly pageSize: number;
  /** Empty for the first page. */
  readonly pageToken: string;
}

export interface ToolRegistry {
  /** One page of the organization's tools by name ascending; `nextPageToken` is empty at the end. */
  list(orgId: string, page: ToolPage): Promise<{ tools: Tool[]; nextPageToken: string }>;
  get(orgId: string, name: string): Promise<Tool | undefined>;
  /**
   * Runs one call: checks `input` against the tool's inputs (applying defaults), then invokes it
   * with a signal that aborts at the tool's timeout or when `context.signal` does. Every failure is
   * a ToolError; past the timeout the call fails even if the tool ignores its signal.
   */
  invoke(orgId: string, name: string, input: unknown, context: ToolContext): Promise<JsonValue>;
}

export interface ToolRegistryOptions {
  /** Limit for tools whose runtime says 0 (the platform default). */
  readonly defaultTimeoutMs?: number;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
export const DEFAULT_TOOL_TIMEOUT_MS = 5 * 60_000;

/**
 * The registry over `sources`. Names are unique in a catalog: when two sources offer the same
 * name, the earlier source wins, so a later source can never shadow a native tool.
 */
export function createToolRegistry(sources: readonly ToolSource[], options: ToolRegistryOptions = {}): ToolRegistry {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;

  async function catalog(orgId: string): Promise<Tool[]> {
    const byName = new Map<string, Tool>();
    for (const tools of await Promise.all(sources.map((source) => source.listTools(orgId)))) {
      for (const tool of tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
    }
    return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async function get(orgId: string, name: string): Promise<Tool | undefined> {
    return (await catalog(orgId)).find((tool) => tool.name === name);
  }

  return {
    // Keyset pagination on the name: the token holds the last name served, so a page stays right
    // when tools are added or removed between calls (no skipped or repeated tool).
    async list(orgId, page) {
      const size = pageSizeOf(page.pageSize, { fallback: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE });
      const after = decodePageToken("ListTools", page.pageToken);
      const tools = (await catalog(orgId)).filter((tool) => after === "" || tool.name > after);
      const served = tools.slice(0, size);
      const last = served.at(-1);
      const nextPageToken = tools.length > size && last !== undefined ? encodePageToken("ListTools", last.name) : "";
      return { tools: served, nextPageToken };
    },

    get,

    async invoke(orgId, name, input, context) {
      const tool = await get(orgId, name);
      if (tool === undefined) throw new ToolError("not_found", `no tool is named ${JSON.stringify(name)}`);
      const checked = checkToolInput(tool, input);
      return await runWithTimeout(tool, context, tool.runtime.timeoutMs || defaultTimeoutMs, (signal) =>
        tool.invoke(checked, {
          signal,
          idempotencyKey: context.idempotencyKey,
          threadId: context.threadId,
          stepPath: context.stepPath,
          env: context.env,
          memory: context.memory,
          writeArtifact: (artifactName, contentType, bytes) => context.writeArtifact(artifactName, contentType, bytes),
        }),
      );
    },
  };
}

/**
 * Runs `call` with a signal that aborts at `timeoutMs` or with the caller's signal, and settles
 * when either fires even if the call does not: a tool that ignores its signal cannot hold a step
 * past its limit. The abandoned call's late failure is swallowed.
 */
async function runWithTimeout(
  tool: Tool,
  context: ToolContext,
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<JsonValue>,
): Promise<JsonValue> {
  const controller = new AbortController();
  const stopped = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  const timeout = new ToolError(
    "timeout",
    `${tool.name} did not finish within its timeout of ${formatDuration(timeoutMs)}`,
  );
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  const onCancel = () =>
    controller.abort(new ToolError("cancelled", `${tool.name} was cancelled`, { cause: context.signal.reason }));
  if (context.signal.aborted) onCancel();
  else context.signal.addEventListener("abort", onCancel, { once: true });
  try {
    const running = controller.signal.aborted ? stopped : call(controller.signal);
    running.catch(() => undefined);
    return await Promise.race([running, stopped]);
  } catch (error) {
    // Once the signal fired, whatever the tool threw (an AbortError, a fetch failure) is the
    // consequence; the reason says what actually happened.
    throw toToolError(controller.signal.aborted ? controller.signal.reason : error);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener("abort", onCancel);
  }
}
