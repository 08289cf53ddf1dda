import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ActionRunStatus, type ActionRunManifest } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { JsonValue } from "../script/dsl/cel-json.js";
import type { ActionObjects } from "./actions-ports.js";
import type { RunManifests } from "./run-manifests.js";
import { invalid, notFound } from "./selection-adaptation.js";

/** ListRecentActions' `limit` when 0, and its cap (the contract's: as the template listing's page size). */
export const DEFAULT_HISTORY_LIMIT = 50;
export const MAX_HISTORY_LIMIT = 200;
/** Largest sibling file GetActionRun reads inline; a larger one is read from its key. */
export const MAX_INLINE_SIBLING_BYTES = 4 * 1024 * 1024;

/** The bucket's runs, newest first: one listing of the runs prefix, then the manifests read in parallel; filters after. */
export async function recentRuns(
  manifests: RunManifests,
  orgId: string,
  bucket: string,
  query: { limit: number; status: ActionRunStatus; actionId: string },
): Promise<ActionRunManifest[]> {
  if (query.limit < 0) throw invalid("limit must not be negative");
  const limit = Math.min(query.limit === 0 ? DEFAULT_HISTORY_LIMIT : query.limit, MAX_HISTORY_LIMIT);
  const folders = await manifests.listFolders(orgId, bucket, limit);
  const read = await Promise.all(
    folders.map((folder) => manifests.read(orgId, bucket, folder.reverseTs, folder.runId)),
  );
  return read.filter(
    (manifest): manifest is ActionRunManifest =>
      manifest !== undefined &&
      (query.status === ActionRunStatus.UNSPECIFIED || manifest.status === query.status) &&
      (query.actionId === "" || manifest.actionId === query.actionId),
  );
}

export async function requireRun(
  manifests: RunManifests,
  orgId: string,
  bucket: string,
  runId: string,
): Promise<ActionRunManifest> {
  if (runId === "") throw invalid("run_id is required");
  const manifest = await manifests.find(orgId, bucket, runId.toLowerCase());
  if (!manifest) throw notFound(`run ${runId} not found in bucket ${bucket}`);
  return manifest;
}

/** The sibling output file's content: JSON parsed when it is JSON, else the text. */
export async function siblingOutput(
  objects: ActionObjects,
  orgId: string,
  manifest: ActionRunManifest,
): Promise<Value | undefined> {
  if (manifest.outputLocation.case !== "siblingFile") return undefined;
  const file = manifest.outputLocation.value;
  if (file.sizeBytes > BigInt(MAX_INLINE_SIBLING_BYTES))
    throw new ConnectError(
      `the output file is larger than the ${MAX_INLINE_SIBLING_BYTES} bytes read inline; read ${file.key} from the bucket`,
      Code.FailedPrecondition,
    );
  const object = await objects.read(orgId, manifest.bucket, file.key, MAX_INLINE_SIBLING_BYTES);
  if (!object) throw notFound(`the output file ${file.key} of run ${manifest.runId} no longer exists`);
  const text = Buffer.from(object.bytes).toString("utf8");
  if (/json/.test(file.contentType) && !/ndjson/.test(file.contentType)) {
    try {
      return fromJson(ValueSchema, JSON.parse(text) as JsonValue);
    } catch {
      // Not JSON after all: given as its text.
    }
  }
  return fromJson(ValueSchema, text);
}
