import { create, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ActionRunStatus,
  OutputKind,
  OutputPromotionSchema,
  S3ObjectRefSchema,
  WarehouseRowsRefSchema,
  type ActionRunManifest,
  type OutputPromotion,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import {
  TableWriteMode,
  type S3OutputTarget,
  type WarehouseTableOutputTarget,
} from "../../../../gen/platform/data/actions/v1/actions_service_pb.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { ActionsPorts } from "./actions-ports.js";
import { MAX_ROWS } from "./binding-resolution.js";
import type { RunManifests } from "./run-manifests.js";
import { invalid, notFound } from "./selection-adaptation.js";

/**
 * SaveActionOutput: a permanent copy of a completed run's output, to an object or to a warehouse
 * table, recorded in the manifest's `promoted`. A save whose target the manifest already records is
 * answered with that promotion and writes nothing again.
 */

/** Largest output saved to a table from a file (the rows must be parsed in memory). */
const MAX_SAVED_FILE_BYTES = 32 * 1024 * 1024;

const precondition = (message: string) => new ConnectError(message, Code.FailedPrecondition);
const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export interface SavedOutput {
  readonly promotion: OutputPromotion;
  readonly manifest: ActionRunManifest;
}

export async function saveToObject(
  ports: ActionsPorts,
  manifests: RunManifests,
  orgId: string,
  manifest: ActionRunManifest,
  target: S3OutputTarget,
  now: number,
): Promise<SavedOutput> {
  if (target.targetBucket === "") throw invalid("s3.target_bucket is required");
  if (target.targetKey === "") throw invalid("s3.target_key is required");
  const repeat = manifest.promoted.find(
    (p) =>
      p.location.case === "s3Object" &&
      p.location.value.bucket === target.targetBucket &&
      p.location.value.key === target.targetKey,
  );
  if (repeat) return { promotion: repeat, manifest };
  requireCompleted(manifest);
  if (!(await ports.objects.bucketExists(orgId, target.targetBucket)))
    throw notFound(`bucket ${target.targetBucket} not found`);
  const to = { bucket: target.targetBucket, key: target.targetKey };
  const location = manifest.outputLocation;
  let saved: { size: number; contentType: string };
  switch (location.case) {
    case "outputInline": {
      const value = toJson(ValueSchema, location.value);
      const textual =
        typeof value === "string" &&
        (manifest.outputKind === OutputKind.TEXT || manifest.outputKind === OutputKind.MARKDOWN);
      const contentType = textual
        ? manifest.outputKind === OutputKind.MARKDOWN
          ? "text/markdown; charset=utf-8"
          : "text/plain; charset=utf-8"
        : "application/json";
      const bytes = Buffer.from(textual ? (value as string) : JSON.stringify(value), "utf8");
      saved = await ports.objects.put(orgId, to.bucket, to.key, bytes, contentType);
      break;
    }
    case "siblingFile":
      saved = await copy(ports, orgId, { bucket: manifest.bucket, key: location.value.key }, to);
      break;
    case "s3Object":
      saved = await copy(ports, orgId, { bucket: location.value.bucket, key: location.value.key }, to);
      break;
    default:
      throw precondition(
        "the run's output is not a file (it is in a table or a collection); save it to a warehouse_table target or use it where it is",
      );
  }
  const promotion = create(OutputPromotionSchema, {
    promotedAtMs: BigInt(now),
    location: {
      case: "s3Object",
      value: create(S3ObjectRefSchema, { ...to, contentType: saved.contentType, sizeBytes: BigInt(saved.size) }),
    },
  });
  return stamp(manifests, orgId, manifest, promotion);
}

export async function saveToTable(
  ports: ActionsPorts,
  manifests: RunManifests,
  orgId: string,
  manifest: ActionRunManifest,
  target: WarehouseTableOutputTarget,
  now: number,
): Promise<SavedOutput> {
  const bucket = target.targetBucket === "" ? manifest.bucket : target.targetBucket;
  const tableName = target.targetTableName;
  if (tableName === "") throw invalid("warehouse_table.target_table_name is required");
  const repeat = manifest.promoted.find(
    (p) =>
      p.location.case === "warehouseRows" &&
      p.location.value.bucket === bucket &&
      p.location.value.tableName === tableName,
  );
  if (repeat) return { promotion: repeat, manifest };
  requireCompleted(manifest);
  const tables = ports.tables;
  if (!tables) throw precondition("warehouse tables are not served by this server");
  if (!(await ports.objects.bucketExists(orgId, bucket))) throw notFound(`bucket ${bucket} not found`);
  const rows = await outputRows(ports, orgId, manifest);
  const written = await tables.load(orgId, bucket, tableName, rows, {
    mode: target.writeMode === TableWriteMode.MERGE ? "merge" : "append",
    create: target.createIfMissing ? "if_missing" : "never",
  });
  const promotion = create(OutputPromotionSchema, {
    promotedAtMs: BigInt(now),
    location: {
      case: "warehouseRows",
      value: create(WarehouseRowsRefSchema, { bucket, tableName, rowCount: BigInt(written) }),
    },
  });
  return stamp(manifests, orgId, manifest, promotion);
}

function requireCompleted(manifest: ActionRunManifest) {
  if (manifest.status !== ActionRunStatus.COMPLETED)
    throw precondition(`run ${manifest.runId} did not complete; only a completed run's output can be saved`);
}

async function copy(
  ports: ActionsPorts,
  orgId: string,
  from: { bucket: string; key: string },
  to: { bucket: string; key: string },
) {
  if (!(await ports.objects.head(orgId, from.bucket, from.key)))
    throw notFound(`the run's output ${from.key} no longer exists`);
  return ports.objects.copy(orgId, from, to);
}

async function stamp(
  manifests: RunManifests,
  orgId: string,
  manifest: ActionRunManifest,
  promotion: OutputPromotion,
): Promise<SavedOutput> {
  manifest.promoted.push(promotion);
  await manifests.write(orgId, manifest);
  return { promotion, manifest };
}

/** The output as rows: an inline or file array of objects (or an object's `rows`), CSV/JSON Lines files, or the table the run wrote. */
async function outputRows(ports: ActionsPorts, orgId: string, manifest: ActionRunManifest): Promise<JsonObject[]> {
  const tables = ports.tables!;
  const location = manifest.outputLocation;
  const asRows = (value: JsonValue): JsonObject[] => {
    const list = isObject(value) && Array.isArray(value["rows"]) ? value["rows"] : value;
    if (Array.isArray(list) && list.every(isObject)) return list;
    if (isObject(list)) return [list];
    throw precondition("the run's output is not rows (an array of objects)");
  };
  switch (location.case) {
    case "outputInline":
      return asRows(toJson(ValueSchema, location.value) as JsonValue);
    case "siblingFile":
    case "s3Object": {
      const bucket = location.case === "s3Object" ? location.value.bucket : manifest.bucket;
      const { key, contentType } = location.value;
      const object = await ports.objects.read(orgId, bucket, key, MAX_SAVED_FILE_BYTES);
      if (!object) throw notFound(`the run's output ${key} no longer exists`);
      const text = Buffer.from(object.bytes).toString("utf8");
      if (/csv/.test(contentType) || key.endsWith(".csv")) return tables.parseCsv(text);
      if (/ndjson|jsonl/.test(contentType) || /\.(jsonl|ndjson)$/.test(key)) return tables.parseJsonLines(text);
      try {
        return asRows(JSON.parse(text) as JsonValue);
      } catch (error) {
        if (error instanceof ConnectError) throw error;
        throw precondition("the run's output file is not rows (JSON, JSON Lines or CSV)");
      }
    }
    case "warehouseRows":
      return tables.readRows(orgId, location.value.bucket, location.value.tableName, { limit: MAX_ROWS, offset: 0 });
    default:
      throw precondition("the run's output has no rows to save");
  }
}
