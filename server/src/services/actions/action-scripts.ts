import { Code, ConnectError } from "@connectrpc/connect";
import { ThreadStatus } from "../../../../gen/platform/script/v1/thread_pb.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { InProcessScripts } from "../script/in-process-scripts.js";
import type { ActionScripts, ActionTemplate, ActionTemplates, ThreadProgress } from "./actions-ports.js";

export interface ActionScriptsOptions {
  /** The script service, called in process as the actions service's principal. */
  readonly scripts: InProcessScripts;
  /** Longest run of one action's thread. */
  readonly timeout?: string;
}

/** The script an action's template runs as in an organization. */
export const actionScriptName = (templateId: string) => `action.${templateId}`;

/**
 * The script service as the actions service uses it: the template is published as the
 * organization's script `action.<template id>`, and each run is one of its threads, durable and
 * visible in ListThreads.
 */
export function createActionScripts(options: ActionScriptsOptions): ActionScripts & ActionTemplates {
  const { scripts } = options;

  return {
    async get(templateId): Promise<ActionTemplate | undefined> {
      const template = await scripts.template(templateId);
      if (!template) return undefined;
      const contract = template.info && "contract" in template.info ? template.info.contract : undefined;
      return {
        id: templateId,
        description: template.info?.description ?? "",
        inputs: (contract?.inputs ?? {}) as JsonObject,
        outputs: (contract?.outputs ?? {}) as JsonObject,
      };
    },

    async start(orgId, templateId, input, metadata) {
      const template = await scripts.template(templateId);
      if (!template)
        throw new ConnectError(`the action's template ${templateId} is not served`, Code.FailedPrecondition);
      const scriptName = actionScriptName(templateId);
      await scripts.publish(orgId, scriptName, template.dslContent);
      return scripts.startThread(orgId, scriptName, input, { timeout: options.timeout ?? "30m", metadata });
    },

    async *watch(orgId, threadId, signal): AsyncGenerator<ThreadProgress> {
      // The watch replays what happened so far and ends after the terminal event.
      for await (const event of scripts.events(orgId, threadId, signal)) {
        const member = event.event;
        switch (member?.case) {
          case "yielded": {
            const data = member.value.valueData;
            let value: JsonValue = null;
            try {
              value = data && data.length > 0 ? (JSON.parse(Buffer.from(data).toString("utf8")) as JsonValue) : null;
            } catch {
              value = null;
            }
            yield { kind: "yielded", stepPath: member.value.stepPath ?? "", stepName: member.value.name ?? "", value };
            break;
          }
          case "completed":
            yield { kind: "completed" };
            return;
          case "failed":
            yield {
              kind: "failed",
              error: member.value.error ?? "",
              failedStepPath: member.value.failedStepPath ?? "",
              failedStepName: member.value.failedStepName ?? "",
            };
            return;
          case "cancelled":
            yield {
              kind: "cancelled",
              reason: member.value.reason ?? "",
              stepPath: member.value.cancelledStepPath ?? "",
            };
            return;
        }
      }
      // A watch that ended without a terminal event: the thread's own status says how it ended.
      const thread = await scripts.thread(orgId, threadId);
      if (thread.status === ThreadStatus.COMPLETED) yield { kind: "completed" };
      else if (thread.status === ThreadStatus.FAILED)
        yield { kind: "failed", error: thread.error ?? "", failedStepPath: "", failedStepName: "" };
      else if (thread.status === ThreadStatus.CANCELLED) yield { kind: "cancelled", reason: "", stepPath: "" };
    },

    output: (orgId, threadId) => scripts.output(orgId, threadId),
  };
}
