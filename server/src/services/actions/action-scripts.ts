import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import {
  CreateScriptRequestSchema,
  CreateThreadRequestSchema,
  GetTemplateRequestSchema,
  GetThreadRequestSchema,
  ScriptService,
  StreamThreadResultRequestSchema,
  WatchThreadRequestSchema,
} from "../../../../gen/platform/script/v1/script_service_pb.js";
import { ThreadStatus } from "../../../../gen/platform/script/v1/thread_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { principalKey, type Principal } from "../../auth/principal.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { ActionScripts, ActionTemplate, ActionTemplates, ThreadProgress } from "./actions-ports.js";

type ScriptMethods = Pick<
  ScriptServiceImplementation,
  "getTemplate" | "createScript" | "createThread" | "watchThread" | "getThread" | "streamThreadResult"
>;

export interface ActionScriptsOptions {
  readonly scripts: Partial<ScriptMethods>;
  /** The organization's name, which the script service writes into what it answers. */
  readonly organizationName: (orgId: string) => Promise<string>;
  /** Longest run of one action's thread. */
  readonly timeout?: string;
}

/** The script an action's template runs as in an organization. */
export const actionScriptName = (templateId: string) => `action.${templateId}`;

/**
 * The script service as the actions service uses it, called in process through its generated
 * interface exactly as a remote caller would, as a service principal of the organization: the
 * template is published as the organization's script `action.<template id>` (publishing an
 * unchanged source is a no-op, and this process remembers what it published), and each run is one
 * of its threads, durable and visible in ListThreads.
 */
export function createActionScripts(options: ActionScriptsOptions): ActionScripts & ActionTemplates {
  const scripts = servedMethods(options.scripts);
  const published = new Map<string, string>();

  async function contextOf(orgId: string, signal?: AbortSignal) {
    const principal: Principal = {
      orgId,
      orgName: orgId === "" ? "" : await options.organizationName(orgId),
      keyId: "service:actions",
      roles: new Set(["script.editor"]),
    };
    return createHandlerContext({
      service: ScriptService,
      method: ScriptService.method.createThread,
      protocolName: "in-process",
      requestMethod: "POST",
      url: "in-process://actions",
      ...(signal ? { requestSignal: signal } : {}),
      contextValues: createContextValues().set(principalKey, principal),
    });
  }

  async function templateOf(templateId: string) {
    try {
      const answer = await scripts.getTemplate(
        create(GetTemplateRequestSchema, { id: templateId }),
        await contextOf(""),
      );
      return { info: answer.info, dslContent: answer.dslContent ?? "" };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
      throw error;
    }
  }

  async function publish(orgId: string, templateId: string): Promise<string> {
    const template = await templateOf(templateId);
    if (!template) throw new ConnectError(`the action's template ${templateId} is not served`, Code.FailedPrecondition);
    const name = actionScriptName(templateId);
    const digest = createHash("sha256").update(template.dslContent).digest("hex");
    if (published.get(`${orgId}/${templateId}`) !== digest) {
      await scripts.createScript(
        create(CreateScriptRequestSchema, { name, source: template.dslContent }),
        await contextOf(orgId),
      );
      published.set(`${orgId}/${templateId}`, digest);
    }
    return name;
  }

  return {
    async get(templateId): Promise<ActionTemplate | undefined> {
      const template = await templateOf(templateId);
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
      const scriptName = await publish(orgId, templateId);
      const { threadId = "" } = await scripts.createThread(
        create(CreateThreadRequestSchema, {
          scriptName,
          inputJson: JSON.stringify(input),
          timeout: options.timeout ?? "30m",
          metadata,
          loadEnv: true,
        }),
        await contextOf(orgId),
      );
      return threadId;
    },

    async *watch(orgId, threadId, signal): AsyncGenerator<ThreadProgress> {
      const context = await contextOf(orgId, signal);
      // The watch replays what happened so far and ends after the terminal event.
      for await (const event of scripts.watchThread(create(WatchThreadRequestSchema, { threadId }), context)) {
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
      const thread = await scripts.getThread(create(GetThreadRequestSchema, { threadId }), context);
      if (thread.status === ThreadStatus.COMPLETED) yield { kind: "completed" };
      else if (thread.status === ThreadStatus.FAILED)
        yield { kind: "failed", error: thread.error ?? "", failedStepPath: "", failedStepName: "" };
      else if (thread.status === ThreadStatus.CANCELLED) yield { kind: "cancelled", reason: "", stepPath: "" };
    },

    async output(orgId, threadId) {
      const context = await contextOf(orgId);
      const parts: Uint8Array[] = [];
      const request = create(StreamThreadResultRequestSchema, { threadId });
      for await (const chunk of scripts.streamThreadResult(request, context)) {
        if (chunk.chunk?.case === "output" && chunk.chunk.value.data) parts.push(chunk.chunk.value.data);
      }
      const text = Buffer.concat(parts).toString("utf8");
      return (text === "" ? null : JSON.parse(text)) as JsonValue;
    },
  };
}

function servedMethods(service: Partial<ScriptMethods>): ScriptMethods {
  const names = [
    "getTemplate",
    "createScript",
    "createThread",
    "watchThread",
    "getThread",
    "streamThreadResult",
  ] as const;
  for (const name of names) {
    if (!service[name]) throw new Error(`the script service given to the actions service does not serve ${name}`);
  }
  return service as ScriptMethods;
}
