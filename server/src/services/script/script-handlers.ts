import { Code, ConnectError } from "@connectrpc/connect";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { createCallbackKeyMethods } from "./callbacks/callback-key-methods.js";
import type { CallbackSigningKeys } from "./callbacks/callback-signing-keys.js";
import { createEnvStore } from "./env-store.js";
import { checkDeletions, checkEntries, checkKey, checkScriptName, checkValue } from "./key-rules.js";
import { createScriptRegistryMethods } from "./script-registry-methods.js";
import { createScriptStore } from "./script-store.js";
import { createToolMethods } from "./tools/tool-methods.js";
import type { ThreadMethods } from "./threads/thread-methods.js";
import type { ToolRegistry } from "./tools/tool-registry.js";

export interface ScriptServiceOptions {
  readonly db: Database;
  /** Seals environment values at rest (env-sealing.ts). */
  readonly box: SecretBox;
  /** Version string of the running server, reported by HealthCheck. */
  readonly version: string;
  /** When the server started, in epoch milliseconds. */
  readonly startedAt: number;
  /** The clock, in epoch milliseconds; tests pass their own. */
  readonly now?: () => number;
  /** The tools execute steps call: the native set and, later, compute apps. */
  readonly tools: ToolRegistry;
  /** ListTemplates and GetTemplate, over the shipped template catalog. */
  readonly templates?: Pick<ScriptServiceImplementation, "listTemplates" | "getTemplate">;
  /** The thread methods (create, read, cancel, resume, watch, results, artifacts), over the engine's store. */
  readonly threads?: ThreadMethods;
  /** The organizations' callback signing keys (GetCallbackSigningKey, RotateCallbackSigningKey). */
  readonly callbackKeys?: CallbackSigningKeys;
}

/**
 * The script service: the liveness probe, the environment variables (tenant-wide and per-script
 * overlays), script publishing, the tool list, the templates and the thread methods (artifacts
 * included). A method left out of the options answers UNIMPLEMENTED through the generated glue.
 */
export function createScriptService(options: ScriptServiceOptions): Partial<ScriptServiceImplementation> {
  const store = createEnvStore(options.db, options.box);
  const scripts = createScriptStore(options.db);
  const now = options.now ?? Date.now;
  const requireScript = async (orgId: string, name: string) => {
    if (!(await scripts.get(orgId, name)))
      throw new ConnectError(`script ${JSON.stringify(name)} not found`, Code.NotFound);
  };

  return {
    ...createScriptRegistryMethods({ db: options.db, box: options.box }),
    ...createToolMethods(options.tools),
    ...(options.templates ?? {}),
    ...(options.threads ?? {}),
    ...(options.callbackKeys ? createCallbackKeyMethods(options.callbackKeys) : {}),
    // Public: no credentials, so it must not ask for a principal; it touches no database either, so
    // it answers "the process serves requests", the question a liveness probe asks.
    healthCheck() {
      const uptimeMs = Math.max(0, now() - options.startedAt);
      return { status: "ok", version: options.version, uptimeSeconds: BigInt(Math.floor(uptimeMs / 1000)) };
    },

    async setEnvVar(request, context) {
      checkKey("key", request.key);
      checkValue("value", request.value, "required");
      await store.setEnvVar(principalOf(context).orgId, request.key, request.value);
      return { key: request.key };
    },

    async getEnvVar(request, context) {
      checkKey("key", request.key);
      const value = await store.getEnvVar(principalOf(context).orgId, request.key);
      if (value === undefined)
        throw new ConnectError(`environment variable ${JSON.stringify(request.key)} is not set`, Code.NotFound);
      return { key: request.key, value };
    },

    async listEnvVars(_request, context) {
      return { vars: await store.listEnvVars(principalOf(context).orgId) };
    },

    // Deleting a key that is not set succeeds, as the contract says, so the call is safe to repeat.
    async deleteEnvVar(request, context) {
      checkKey("key", request.key);
      await store.deleteEnvVar(principalOf(context).orgId, request.key);
      return {};
    },

    // `vars` is REQUIRED and a map has no "present but empty": an empty import is refused rather
    // than answered with a count of 0 that would hide a client sending the wrong body.
    async importEnvVars(request, context) {
      if (Object.keys(request.vars).length === 0)
        throw new ConnectError("vars is required: give at least one variable", Code.InvalidArgument);
      checkEntries("vars", request.vars, "required");
      const count = await store.importEnvVars(principalOf(context).orgId, request.vars);
      return { count };
    },

    // An overlay belongs to a published script: NOT_FOUND otherwise, as the contract says (seed
    // an overlay before the first publication with CreateScript's `env`).
    async getScriptEnv(request, context) {
      checkScriptName("name", request.name);
      const { orgId } = principalOf(context);
      await requireScript(orgId, request.name);
      return { vars: await store.getScriptEnv(orgId, request.name) };
    },

    async updateScriptEnv(request, context) {
      checkScriptName("name", request.name);
      // Empty values are valid here: they let the tenant value pass through at thread start.
      checkEntries("set", request.set, "allowed");
      checkDeletions(request.delete, request.set);
      await requireScript(principalOf(context).orgId, request.name);
      const vars = await store.updateScriptEnv(principalOf(context).orgId, request.name, {
        set: request.set,
        delete: request.delete,
      });
      return { vars };
    },
  };
}
