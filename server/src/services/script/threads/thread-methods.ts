import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { principalOf } from "../../../auth/principal.js";
import { pageSizeOf } from "../../../pagination/page-token.js";
import { isJsonObject } from "../dsl/cel-json.js";
import { compileContract, parseInputJson } from "../dsl/contract.js";
import { parsePublishedScript } from "../dsl/parse-script.js";
import { ScriptValidationError } from "../dsl/script-validation-error.js";
import { topLevelCount } from "../dsl/step-paths.js";
import { mergeEnvironment } from "../env-merge.js";
import { sealThreadEnv } from "../env-sealing.js";
import { createEnvStore } from "../env-store.js";
import { checkScriptName } from "../key-rules.js";
import { createScriptStore } from "../script-store.js";
import { threadMethodsContext, type ThreadMethodsDeps } from "./thread-access.js";
import { createArtifactMethods } from "./thread-artifacts.js";
import { createLifecycleMethods, wake } from "./thread-lifecycle.js";
import { threadStatusText, toThreadMessage } from "./thread-messages.js";
import {
  checkCallbackUrl,
  checkMetadata,
  decodeThreadCursor,
  encodeThreadCursor,
  invalid,
  threadTimeoutMs,
} from "./thread-requests.js";
import { createResultMethods } from "./thread-results.js";
import { createWatchMethods } from "./thread-watch.js";

export type { ThreadMethodsDeps } from "./thread-access.js";

export type ThreadMethods = Pick<
  ScriptServiceImplementation,
  | "createThread"
  | "getThread"
  | "listThreads"
  | "cancelThread"
  | "resumeThread"
  | "watchThread"
  | "watchStep"
  | "getThreadResult"
  | "streamThreadResult"
  | "streamStepResult"
  | "listArtifacts"
>;

/** ListThreads page sizes, as the contract says (AIP-158). */
export const THREAD_PAGE_SIZE = { fallback: 50, max: 500 } as const;

/**
 * The thread methods of the script service. They create threads and make the transitions the API
 * owns (cancel while idle, resume); everything else (running steps, writing events and artifacts,
 * delivering callbacks) is the engine's, which this side reads back through the thread store and
 * wakes through the thread signals.
 */
export function createThreadMethods(deps: ThreadMethodsDeps): ThreadMethods {
  const context = threadMethodsContext(deps);
  const { store, now } = context;
  const scripts = createScriptStore(deps.db);
  const env = createEnvStore(deps.db, deps.box);

  return {
    async createThread(request, handlerContext) {
      const { orgId } = principalOf(handlerContext);
      checkScriptName("script_name", request.scriptName);
      if (request.version < 0)
        throw invalid(`version must be 0 (the active version) or a version number, got ${request.version}`);
      const timeoutMs = threadTimeoutMs(request.timeout, context.defaultTimeoutMs);
      checkMetadata(request.metadata);
      checkCallbackUrl(request.callbackUrl, context.allowPrivateCallbacks);
      const input = parseInputJson(request.inputJson, "input_json");
      if (!isJsonObject(input)) throw invalid("input_json: must be a JSON object");

      const version = await scripts.getVersion(orgId, request.scriptName, request.version);
      if (!version) {
        const exists = request.version !== 0 && (await scripts.get(orgId, request.scriptName)) !== undefined;
        throw new ConnectError(
          exists
            ? `script ${JSON.stringify(request.scriptName)} has no version ${request.version}`
            : `script ${JSON.stringify(request.scriptName)} not found`,
          Code.NotFound,
        );
      }
      let document;
      try {
        document = parsePublishedScript(version.source);
      } catch (error) {
        // Published sources were valid when published; a rule added since can refuse an old one.
        if (error instanceof ScriptValidationError) {
          throw new ConnectError(
            `script ${version.scriptName} version ${version.version} no longer validates: ${error.message}`,
            Code.FailedPrecondition,
          );
        }
        throw error;
      }
      const validated = compileContract(document).validateInput(input, "input_json");
      const environment = request.loadEnv
        ? mergeEnvironment(
            Object.fromEntries((await env.listEnvVars(orgId)).map((entry) => [entry.key, entry.value])),
            Object.fromEntries(
              (await env.getScriptEnv(orgId, request.scriptName)).map((entry) => [entry.key, entry.value]),
            ),
          )
        : {};

      const createdAt = now();
      // The id is chosen here, as the sealed environment is bound to it.
      const threadId = randomUUID();
      const row = await store.insert({
        id: threadId,
        orgId,
        scriptName: version.scriptName,
        scriptVersion: version.version,
        status: "pending",
        input: validated,
        env: {},
        sealedEnv: sealThreadEnv(deps.box, { orgId, threadId }, environment),
        metadata: { ...request.metadata },
        timeoutMs,
        deadlineAt: timeoutMs > 0 ? createdAt + timeoutMs : 0,
        callbackUrl: request.callbackUrl,
        totalSteps: topLevelCount(document),
        createdAt,
      });
      await wake(() => context.signals.runnable());
      return { threadId: row.id, status: ThreadStatus.PENDING, createdAtMs: BigInt(row.createdAt) };
    },

    async getThread(request, handlerContext) {
      const { orgId, orgName } = principalOf(handlerContext);
      return toThreadMessage(await context.requireThread(orgId, request.threadId), orgName);
    },

    async listThreads(request, handlerContext) {
      const { orgId, orgName } = principalOf(handlerContext);
      const limit = pageSizeOf(request.pageSize, THREAD_PAGE_SIZE);
      const status =
        request.statusFilter === ThreadStatus.UNSPECIFIED ? undefined : threadStatusText(request.statusFilter);
      if (request.statusFilter !== ThreadStatus.UNSPECIFIED && status === undefined)
        throw invalid(`status_filter: ${request.statusFilter} is not a ThreadStatus`);
      const filters = `${request.statusFilter}:${request.scriptNameFilter}`;
      const after = decodeThreadCursor(request.pageToken, filters);
      const rows = await store.list(orgId, {
        ...(status ? { status } : {}),
        ...(request.scriptNameFilter === "" ? {} : { scriptName: request.scriptNameFilter }),
        ...(after ? { after } : {}),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        threads: page.map((row) => toThreadMessage(row, orgName)),
        nextPageToken:
          rows.length > limit && last ? encodeThreadCursor({ createdAt: last.createdAt, id: last.id }, filters) : "",
      };
    },

    ...createLifecycleMethods(context),
    ...createWatchMethods(context),
    ...createResultMethods(context),
    ...createArtifactMethods(context),
  };
}
