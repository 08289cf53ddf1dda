import { createHash } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ScriptContractSchema } from "../../../../gen/platform/script/v1/catalog_pb.js";
import {
  ScriptSchema,
  ScriptVersionSchema,
  type Script,
  type ScriptVersion,
} from "../../../../gen/platform/script/v1/script_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { compileContract } from "./dsl/contract.js";
import { parseScript } from "./dsl/parse-script.js";
import { ScriptValidationError } from "./dsl/script-validation-error.js";
import { toolsRequired } from "./dsl/tools-required.js";
import { createEnvStore } from "./env-store.js";
import { checkEntries, checkScriptName } from "./key-rules.js";
import { decodePageToken, encodePageToken, pageSizeOf } from "../../pagination/page-token.js";
import { createScriptStore, type ScriptRow, type ScriptVersionRow } from "./script-store.js";

/** Largest script source accepted, as the contract says. */
const MAX_SOURCE_BYTES = 1024 * 1024;

type RegistryMethods = Pick<
  ScriptServiceImplementation,
  "createScript" | "getScript" | "listScripts" | "activateScriptVersion"
>;

/** Publishing and reading scripts: the versioned documents threads run. */
export function createScriptRegistryMethods({ db, box }: { db: Database; box: SecretBox }): RegistryMethods {
  const scripts = createScriptStore(db);

  return {
    async createScript(request, context) {
      const { orgId } = principalOf(context);
      checkScriptName("name", request.name);
      if (request.source.trim() === "") throw new ConnectError("source is required", Code.InvalidArgument);
      if (Buffer.byteLength(request.source) > MAX_SOURCE_BYTES) {
        throw new ConnectError(`source is larger than ${MAX_SOURCE_BYTES} bytes`, Code.InvalidArgument);
      }
      checkEntries("env", request.env, "allowed");
      let document;
      try {
        document = parseScript(request.source);
      } catch (error) {
        if (error instanceof ScriptValidationError) throw error.toConnectError("source");
        throw error;
      }
      const contract = compileContract(document).toProto();
      const { script } = await scripts.publish(
        orgId,
        {
          name: request.name,
          source: request.source,
          sourceSha256: createHash("sha256").update(request.source).digest("hex"),
          description: document.description,
          contract: { inputs: contract.inputs, outputs: contract.outputs },
          toolsRequired: toolsRequired(document),
        },
        // The seed and the publication commit together.
        Object.keys(request.env).length === 0
          ? undefined
          : async (tx) => {
              await createEnvStore(tx, box).updateScriptEnv(orgId, request.name, { set: request.env, delete: [] });
            },
      );
      return toScriptMessage(script, await activeVersion(orgId, script));
    },

    async getScript(request, context) {
      const { orgId } = principalOf(context);
      checkScriptName("name", request.name);
      if (request.version < 0)
        throw new ConnectError("version must be 0 (the active version) or a version number", Code.InvalidArgument);
      const script = await scripts.get(orgId, request.name);
      if (!script) throw notFound(request.name);
      const version = await scripts.getVersion(orgId, request.name, request.version);
      if (!version)
        throw new ConnectError(
          `script ${JSON.stringify(request.name)} has no version ${request.version}`,
          Code.NotFound,
        );
      return {
        script: toScriptMessage(script, await activeVersion(orgId, script)),
        version: toVersionMessage(version),
      };
    },

    async listScripts(request, context) {
      const { orgId } = principalOf(context);
      const pageSize = pageSizeOf(request.pageSize, { fallback: 50, max: 500 });
      const after = decodePageToken("ListScripts", request.pageToken);
      const rows = await scripts.list(orgId, after, pageSize + 1);
      const page = rows.slice(0, pageSize);
      const items = await Promise.all(page.map(async (row) => toScriptMessage(row, await activeVersion(orgId, row))));
      return {
        scripts: items,
        nextPageToken: rows.length > pageSize ? encodePageToken("ListScripts", page.at(-1)!.name) : "",
      };
    },

    async activateScriptVersion(request, context) {
      const { orgId } = principalOf(context);
      checkScriptName("name", request.name);
      if (request.version < 1)
        throw new ConnectError("version must be a published version number (1 or more)", Code.InvalidArgument);
      if (!(await scripts.get(orgId, request.name))) throw notFound(request.name);
      const script = await scripts.activate(orgId, request.name, request.version);
      if (!script)
        throw new ConnectError(
          `script ${JSON.stringify(request.name)} has no version ${request.version}`,
          Code.NotFound,
        );
      return toScriptMessage(script, await activeVersion(orgId, script));
    },
  };

  async function activeVersion(orgId: string, script: ScriptRow): Promise<ScriptVersionRow> {
    const version = await scripts.getVersion(orgId, script.name, script.activeVersion);
    if (!version)
      throw new ConnectError(`script ${script.name} lost its active version ${script.activeVersion}`, Code.Internal);
    return version;
  }
}

function notFound(name: string): ConnectError {
  return new ConnectError(`script ${JSON.stringify(name)} not found`, Code.NotFound);
}

function contractMessage(row: ScriptVersionRow) {
  return create(ScriptContractSchema, {
    inputs: row.contract.inputs as JsonObject,
    outputs: row.contract.outputs as JsonObject,
  });
}

function toScriptMessage(row: ScriptRow, active: ScriptVersionRow): Script {
  return create(ScriptSchema, {
    name: row.name,
    activeVersion: row.activeVersion,
    latestVersion: row.latestVersion,
    description: active.description,
    contract: contractMessage(active),
    toolsRequired: active.toolsRequired,
    createdAtMs: BigInt(row.createdAt),
    updatedAtMs: BigInt(row.updatedAt),
  });
}

function toVersionMessage(row: ScriptVersionRow): ScriptVersion {
  return create(ScriptVersionSchema, {
    version: row.version,
    source: row.source,
    sourceSha256: row.sourceSha256,
    contract: contractMessage(row),
    toolsRequired: row.toolsRequired,
    createdAtMs: BigInt(row.createdAt),
  });
}
