import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { ScriptService, WatchThreadRequestSchema } from "../../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { principalKey, type Principal } from "../../auth/principal.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { QueueThreads } from "./queue-ports.js";

export interface ScriptThreadFollowerOptions {
  readonly scripts: Partial<Pick<ScriptServiceImplementation, "watchThread">>;
  /** The organization's name, which the script service writes into what it answers. */
  readonly organizationName: (orgId: string) => Promise<string>;
}

/**
 * Follows a run's thread through the script service's WatchThread, called in process as a service
 * principal of the organization: the watch replays the thread's events so far and then follows the
 * shared database, so it sees a thread that a worker of any process runs.
 */
export function scriptThreadFollower(options: ScriptThreadFollowerOptions): QueueThreads {
  return {
    async *yields(orgId, threadId, signal) {
      const watchThread = options.scripts.watchThread;
      if (!watchThread) throw new Error("the script service given to the action queue does not serve watchThread");
      const principal: Principal = {
        orgId,
        orgName: await options.organizationName(orgId),
        keyId: "service:actions",
        roles: new Set(["script.viewer"]),
      };
      const context = createHandlerContext({
        service: ScriptService,
        method: ScriptService.method.watchThread,
        protocolName: "in-process",
        requestMethod: "POST",
        url: "in-process://actions",
        requestSignal: signal,
        contextValues: createContextValues().set(principalKey, principal),
      });
      for await (const event of watchThread(create(WatchThreadRequestSchema, { threadId }), context)) {
        const kind = event.event?.case;
        if (kind === "completed" || kind === "failed" || kind === "cancelled") return;
        if (event.event?.case !== "yielded") continue;
        if (signal.aborted) return;
        const { stepPath = "", name = "", valueData } = event.event.value;
        const text = valueData ? Buffer.from(valueData).toString("utf8") : "null";
        yield { stepPath, stepName: name, value: progressValue(JSON.parse(text) as JsonValue) };
      }
    },
  };
}

/** A yielded value as a progress event carries it: an object as it is, anything else as `{value}`. */
export function progressValue(value: JsonValue): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : { value };
}
