import { Code, ConnectError } from "@connectrpc/connect";
import { ThreadStatus } from "../../../../gen/platform/script/v1/thread_pb.js";
import type { InProcessScripts } from "../script/in-process-scripts.js";
import type { TemplateRunner } from "./ingest-ports.js";

export interface ScriptTemplateRunnerOptions {
  /** The script service, called in process as ingestion's service principal. */
  readonly scripts: InProcessScripts;
  /** Longest run of one object's script. */
  readonly timeout?: string;
}

/** The script a template runs as in an organization: published from the template on first use. */
export const pipelineScriptName = (templateId: string) => `pipeline.${templateId}`;

/**
 * Runs index templates through the script service, so the threads are the script service's own:
 * durable, metered and visible in ListThreads. The template's DSL is published as the
 * organization's script `pipeline.<template id>`.
 */
export function createScriptTemplateRunner(options: ScriptTemplateRunnerOptions): TemplateRunner {
  const { scripts } = options;

  return {
    async start(orgId, templateId, input) {
      const template = await scripts.template(templateId);
      if (!template)
        throw new ConnectError(`the pipeline's template ${templateId} is not served`, Code.FailedPrecondition);
      const scriptName = pipelineScriptName(templateId);
      await scripts.publish(orgId, scriptName, template.dslContent);
      return scripts.startThread(orgId, scriptName, input, {
        timeout: options.timeout ?? "30m",
        metadata: { origin: "ingest", template: templateId },
      });
    },

    async output(orgId, threadId, signal) {
      // The watch replays what happened so far and ends after the terminal event.
      for await (const event of scripts.events(orgId, threadId, signal)) {
        if (signal.aborted) break;
        const kind = event.event?.case;
        if (kind === "completed" || kind === "failed" || kind === "cancelled") break;
      }
      signal.throwIfAborted();
      const thread = await scripts.thread(orgId, threadId);
      const status = thread.status ?? ThreadStatus.UNSPECIFIED;
      if (status !== ThreadStatus.COMPLETED) {
        const why = status === ThreadStatus.FAILED ? thread.error : ThreadStatus[status]?.toLowerCase();
        throw new ConnectError(`the pipeline's script ${thread.scriptName} did not complete: ${why}`, Code.Aborted);
      }
      return scripts.output(orgId, threadId, signal);
    },
  };
}
