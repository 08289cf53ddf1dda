import { createHash } from "node:crypto";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
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
import type { JsonValue } from "../script/dsl/cel-json.js";
import type { TemplateRunner } from "./ingest-ports.js";

type ScriptMethods = Pick<
  ScriptServiceImplementation,
  "getTemplate" | "createScript" | "createThread" | "watchThread" | "getThread" | "streamThreadResult"
>;

/** The script service as the server composes it (methods its options leave out are absent). */
export type ScriptService = Partial<ScriptMethods>;

export interface ScriptTemplateRunnerOptions {
  readonly scripts: ScriptService;
  /** The organization's name, which the script service writes into what it answers. */
  readonly organizationName: (orgId: string) => Promise<string>;
  /** Longest run of one object's script. */
  readonly timeout?: string;
}

/** The script a template runs as in an organization: published from the template on first use. */
export const pipelineScriptName = (templateId: string) => `pipeline.${templateId}`;

/**
 * Runs index templates through the script service, calling its handlers in process exactly as a
 * remote caller would (as a service principal of the organization), so the threads are the script
 * service's own: durable, metered and visible in ListThreads. The template's DSL is published as the
 * organization's script `pipeline.<template id>`; publishing an unchanged source is a no-op there,
 * and this process remembers what it published.
 */
export function createScriptTemplateRunner(options: ScriptTemplateRunnerOptions): TemplateRunner {
  const scripts = servedMethods(options.scripts);
  const published = new Map<string, string>();

  async function contextOf(orgId: string, signal?: AbortSignal) {
    const principal: Principal = {
      orgId,
      orgName: await options.organizationName(orgId),
      keyId: "service:ingest",
      roles: new Set(["script.admin"]),
    };
    return createHandlerContext({
      service: ScriptService,
      method: ScriptService.method.createThread,
      protocolName: "in-process",
      requestMethod: "POST",
      url: "in-process://ingest",
      ...(signal ? { requestSignal: signal } : {}),
      contextValues: createContextValues().set(principalKey, principal),
    });
  }

  async function publish(orgId: string, templateId: string): Promise<string> {
    const context = await contextOf(orgId);
    const { dslContent = "" } = await scripts.getTemplate(
      create(GetTemplateRequestSchema, { id: templateId }),
      context,
    );
    const name = pipelineScriptName(templateId);
    const digest = createHash("sha256").update(dslContent).digest("hex");
    if (published.get(`${orgId}/${templateId}`) !== digest) {
      await scripts.createScript(create(CreateScriptRequestSchema, { name, source: dslContent }), context);
      published.set(`${orgId}/${templateId}`, digest);
    }
    return name;
  }

  return {
    async start(orgId, templateId, input) {
      const scriptName = await publish(orgId, templateId);
      const context = await contextOf(orgId);
      const { threadId = "" } = await scripts.createThread(
        create(CreateThreadRequestSchema, {
          scriptName,
          inputJson: JSON.stringify(input),
          timeout: options.timeout ?? "30m",
          metadata: { origin: "ingest", template: templateId },
          loadEnv: true,
        }),
        context,
      );
      return threadId;
    },

    async output(orgId, threadId, signal) {
      const context = await contextOf(orgId, signal);
      // The watch replays what happened so far and ends after the terminal event.
      for await (const event of scripts.watchThread(create(WatchThreadRequestSchema, { threadId }), context)) {
        if (signal.aborted) break;
        const kind = event.event?.case;
        if (kind === "completed" || kind === "failed" || kind === "cancelled") break;
      }
      signal.throwIfAborted();
      const thread = await scripts.getThread(create(GetThreadRequestSchema, { threadId }), context);
      const status = thread.status ?? ThreadStatus.UNSPECIFIED;
      if (status !== ThreadStatus.COMPLETED) {
        const why = status === ThreadStatus.FAILED ? thread.error : ThreadStatus[status]?.toLowerCase();
        throw new ConnectError(`the pipeline's script ${thread.scriptName} did not complete: ${why}`, Code.Aborted);
      }
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

function servedMethods(service: ScriptService): ScriptMethods {
  const names = [
    "getTemplate",
    "createScript",
    "createThread",
    "watchThread",
    "getThread",
    "streamThreadResult",
  ] as const;
  for (const name of names) {
    if (!service[name]) throw new Error(`the script service given to ingestion does not serve ${name}`);
  }
  return service as ScriptMethods;
}
