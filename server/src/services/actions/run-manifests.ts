import { fromJson, toJson, type JsonValue as ProtoJsonValue } from "@bufbuild/protobuf";
import {
  ActionRunManifestSchema,
  type ActionRunManifest,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { ActionObjects } from "./actions-ports.js";
import { manifestKey, parseRunFolder, reverseTimestamp, RUN_ID, RUNS_PREFIX } from "./run-keys.js";

/** Largest manifest read back (an inline output is about 16 KB; params and selection are small). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * Run manifests in their bucket, as the proto JSON of ActionRunManifest with every field written
 * (the data listener's form), through the storage service: a history is a listing, nothing else.
 */
export interface RunManifests {
  write(orgId: string, manifest: ActionRunManifest): Promise<void>;
  read(orgId: string, bucket: string, reverseTs: string, runId: string): Promise<ActionRunManifest | undefined>;
  /** The run's manifest by id alone; undefined when the bucket has no such run. */
  find(orgId: string, bucket: string, runId: string): Promise<ActionRunManifest | undefined>;
  /** Run folders of the bucket, newest first (key order), at most `limit`. */
  listFolders(
    orgId: string,
    bucket: string,
    limit: number,
    after?: string,
  ): Promise<{ reverseTs: string; runId: string }[]>;
}

export function encodeManifest(manifest: ActionRunManifest): Uint8Array {
  return Buffer.from(JSON.stringify(toJson(ActionRunManifestSchema, manifest, { alwaysEmitImplicit: true })));
}

export function decodeManifest(bytes: Uint8Array): ActionRunManifest {
  const json = JSON.parse(Buffer.from(bytes).toString("utf8")) as ProtoJsonValue;
  return fromJson(ActionRunManifestSchema, json, { ignoreUnknownFields: true });
}

export function createRunManifests(objects: ActionObjects): RunManifests {
  async function read(orgId: string, bucket: string, reverseTs: string, runId: string) {
    const object = await objects.read(orgId, bucket, manifestKey(reverseTs, runId), MAX_MANIFEST_BYTES);
    if (!object) return undefined;
    try {
      return decodeManifest(object.bytes);
    } catch {
      // A manifest edited by hand into something else is not a run.
      return undefined;
    }
  }

  async function listFolders(orgId: string, bucket: string, limit: number, after = "") {
    const folders: { reverseTs: string; runId: string }[] = [];
    let cursor = after;
    while (folders.length < limit) {
      const page = await objects.list(orgId, bucket, {
        prefix: RUNS_PREFIX,
        delimiter: "/",
        after: cursor,
        maxKeys: Math.min(1000, limit - folders.length),
      });
      for (const prefix of page.prefixes) {
        const folder = parseRunFolder(prefix.slice(RUNS_PREFIX.length));
        if (folder) folders.push(folder);
      }
      if (page.next === "") break;
      cursor = page.next;
    }
    return folders;
  }

  return {
    async write(orgId, manifest) {
      const key = manifestKey(manifest.reverseTs, manifest.runId);
      await objects.put(orgId, manifest.bucket, key, encodeManifest(manifest), "application/json");
    },
    read,
    async find(orgId, bucket, runId) {
      if (!RUN_ID.test(runId)) return undefined;
      // A run id is a UUIDv7 made in the millisecond of its reverse timestamp: one read, no listing.
      const ms = parseInt(runId.replace(/-/g, "").slice(0, 12), 16);
      return read(orgId, bucket, reverseTimestamp(ms), runId);
    },
    listFolders,
  };
}
