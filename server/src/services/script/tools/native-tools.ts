import { createArtifactWriteTool } from "./artifact-write-tool.js";
import { createCelWorkerPool } from "./cel-worker-pool.js";
import { createCsvFormatTool } from "./csv-format-tool.js";
import { EmbedderRegistry } from "../../../embeddings/embedder-registry.js";
import { NO_EMBEDDINGS } from "../../../embeddings/embeddings-config.js";
import { createEmbeddingsEmbedTool } from "./embeddings-embed-tool.js";
import type { CelWorkerPool } from "./cel-worker-pool.js";
import { createHttpRequestTool } from "./http-request-tool.js";
import { createJsonTransformTool } from "./json-transform-tool.js";
import { createListRankTool } from "./list-rank-tool.js";
import { createLlmCompleteTool } from "./llm-complete-tool.js";
import type { LlmConfig } from "./llm-config.js";
import { createSleepTool } from "./sleep-tool.js";
import { createTableProfileTool } from "./table-profile-tool.js";
import { createTemplateRenderTool } from "./template-render-tool.js";
import { createTextRedactTool } from "./text-redact-tool.js";
import { createTextSplitTool } from "./text-split-tool.js";
import type { Tool } from "./tool.js";
import type { ToolSource } from "./tool-registry.js";

export interface NativeToolOptions {
  /** The fetch the HTTP and LLM tools use; tests and proxies pass their own. */
  readonly fetch?: typeof fetch;
  /** The operator's LLM endpoint (readLlmConfig); undefined keeps llm.complete listed but failing. */
  readonly llm?: LlmConfig | undefined;
  /** The operator's --allow-private-network, for http.request (net/private-network.ts); default false. */
  readonly allowPrivateNetwork?: boolean;
  /**
   * Worker threads for json.transform. The server passes the pool it closes at shutdown; absent,
   * the source makes its own, whose workers start only when used and do not hold the process open.
   */
  readonly celWorkers?: CelWorkerPool;
  /** The embedders of embeddings.embed; default the local embedder only (no endpoint configured). */
  readonly embedders?: EmbedderRegistry;
}

/**
 * The built-in tools every organization has, run in the server process. The set is built once;
 * organizations share it.
 */
export function createNativeToolSource(options: NativeToolOptions = {}): ToolSource {
  const tools: readonly Tool[] = Object.freeze([
    createHttpRequestTool({ fetch: options.fetch, allowPrivateNetwork: options.allowPrivateNetwork }),
    createJsonTransformTool({ workers: options.celWorkers ?? createCelWorkerPool() }),
    createTextSplitTool(),
    createTextRedactTool(),
    createCsvFormatTool(),
    createTableProfileTool(),
    createListRankTool(),
    createTemplateRenderTool(),
    createSleepTool(),
    createLlmCompleteTool({ fetch: options.fetch, llm: options.llm }),
    createArtifactWriteTool(),
    createEmbeddingsEmbedTool(
      options.embedders ??
        new EmbedderRegistry({ config: NO_EMBEDDINGS, allowPrivateNetwork: options.allowPrivateNetwork }),
    ),
  ]);
  return { listTools: async () => tools };
}
