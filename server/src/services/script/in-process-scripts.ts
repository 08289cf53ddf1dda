import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import {
  CreateScriptRequestSchema,
  CreateThreadRequestSchema,
  GetTemplateRequestSchema,
  GetThreadRequestSchema,
  ScriptService,
  StreamThreadResultRequestSchema,
  WatchThreadRequestSchema,
} from "../../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { principalKey, type Principal } from "../../auth/principal.js";
import type { JsonObject, JsonValue } from "./dsl/cel-json.js";

/** The methods another service calls in process. */
export type InProcessScriptMethods = Pick<
  ScriptServiceImplementation,
  "getTemplate" | "createScript" | "createThread" | "watchThread" | "getThread" | "streamThreadResult"
>;

export interface InProcessCallerOptions {
  /** The script service as the server composes it (methods its options leave out are absent). */
  readonly scripts: Partial<InProcessScriptMethods>;
  /** The organization's name, which the script service writes into what it answers. */
  readonly organizationName: (orgId: string) => Promise<string>;
  /** The calling service, as the key id of its principal: `service:ingest`. */
  readonly keyId: string;
  /** The role the calling service acts with in each organization. */
  readonly role: string;
}

/**
 * The script service as another service of this server calls it: through its generated interface,
 * exactly as a remote caller would, as a service principal of the organization. So what it starts
 * are the script service's own threads: durable, metered and visible in ListThreads.
 */
export function inProcessScripts(options: InProcessCallerOptions) {
  const scripts = servedMethods(options.scripts, options.keyId);
  /** Digest of the source each `org/script` was last published with by this process. */
  const published = new Map<string, string>();

  async function contextOf(orgId: string, signal?: AbortSignal): Promise<HandlerContext> {
    const principal: Principal = {
      orgId,
      orgName: orgId === "" ? "" : await options.organizationName(orgId),
      keyId: options.keyId,
      roles: new Set([options.role]),
    };
    return createHandlerContext({
      service: ScriptService,
      method: ScriptService.method.createThread,
      protocolName: "in-process",
      requestMethod: "POST",
      url: `in-process://${options.keyId}`,
      // `requestSignal`: createHandlerContext ignores a member named `signal`.
      ...(signal ? { requestSignal: signal } : {}),
      contextValues: createContextValues().set(principalKey, principal),
    });
  }

  return {
    /** A public template, or undefined when there is no such template. */
    async template(templateId: string) {
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
    },

    /**
     * Publishes `source` as the organization's script `name`. Publishing an unchanged source is a
     * no-op in the script service, and this process remembers what it published, so a busy
     * template costs one call per process.
     */
    async publish(orgId: string, name: string, source: string): Promise<void> {
      const digest = createHash("sha256").update(source).digest("hex");
      if (published.get(`${orgId}/${name}`) === digest) return;
      await scripts.createScript(create(CreateScriptRequestSchema, { name, source }), await contextOf(orgId));
      published.set(`${orgId}/${name}`, digest);
    },

    /** Starts a thread of the script's active version, with the organization's environment; its id. */
    async startThread(
      orgId: string,
      scriptName: string,
      input: JsonObject,
      run: { readonly timeout: string; readonly metadata: Record<string, string> },
    ): Promise<string> {
      const { threadId = "" } = await scripts.createThread(
        create(CreateThreadRequestSchema, {
          scriptName,
          inputJson: JSON.stringify(input),
          timeout: run.timeout,
          metadata: run.metadata,
          loadEnv: true,
        }),
        await contextOf(orgId),
      );
      return threadId;
    },

    /** The thread's events so far, then as they come, ending after the terminal one. */
    async *events(orgId: string, threadId: string, signal?: AbortSignal) {
      const context = await contextOf(orgId, signal);
      yield* scripts.watchThread(create(WatchThreadRequestSchema, { threadId }), context);
    },

    async thread(orgId: string, threadId: string) {
      return scripts.getThread(create(GetThreadRequestSchema, { threadId }), await contextOf(orgId));
    },

    /** A completed thread's output, parsed (null when it has none). */
    async output(orgId: string, threadId: string, signal?: AbortSignal): Promise<JsonValue> {
      const context = await contextOf(orgId, signal);
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

export type InProcessScripts = ReturnType<typeof inProcessScripts>;

function servedMethods(service: Partial<InProcessScriptMethods>, caller: string): InProcessScriptMethods {
  const names = [
    "getTemplate",
    "createScript",
    "createThread",
    "watchThread",
    "getThread",
    "streamThreadResult",
  ] as const;
  for (const name of names) {
    if (!service[name]) throw new Error(`the script service given to ${caller} does not serve ${name}`);
  }
  return service as InProcessScriptMethods;
}
