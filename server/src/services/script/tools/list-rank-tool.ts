import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import { describe, isJsonObject } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool } from "./tool.js";

export const MAX_RANK_ITEMS = 100_000;
const MAX_LIMIT = 1000;

/**
 * `list.rank`: the best-scored item of each key, highest first. Search hits come one per chunk,
 * and a caller usually wants one entry per document; CEL has no sort and no grouping.
 */
export function createListRankTool(): Tool {
  return {
    name: "list.rank",
    version: NATIVE_TOOL_VERSION,
    description:
      "Groups items (objects) by the value of one field, keeps the best-scored item of each group, and returns the groups " +
      "highest score first (ties in order of first appearance), at most `limit`, leaving out the keys in `exclude`.",
    inputs: [
      { name: "items", type: "array", required: true, description: `the items, objects, at most ${MAX_RANK_ITEMS}` },
      {
        name: "key",
        type: "string",
        required: true,
        description: "the field whose value groups the items, such as key",
      },
      { name: "score", type: "string", required: true, description: "the numeric field to rank by, higher first" },
      {
        name: "limit",
        type: "integer",
        required: false,
        defaultValue: 10,
        description: `groups returned, 1 to ${MAX_LIMIT}`,
      },
      { name: "exclude", type: "array", required: false, defaultValue: [], description: "key values to leave out" },
    ],
    outputs: [
      {
        name: "groups",
        type: "array",
        required: true,
        description: "{key, score, count, best}: the key value, the best score, the items of the key, the best item",
      },
    ],
    runtime: nativeRuntime("listRank", 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input) {
      const items = input.items as JsonValue[];
      const keyField = input.key as string;
      const scoreField = input.score as string;
      const limit = input.limit as number;
      if (items.length > MAX_RANK_ITEMS)
        throw invalidInput(`list.rank: items must hold at most ${MAX_RANK_ITEMS} items, got ${items.length}`);
      if (limit < 1 || limit > MAX_LIMIT)
        throw invalidInput(`list.rank: limit must be from 1 to ${MAX_LIMIT}, got ${limit}`);
      const excluded = new Set((input.exclude as JsonValue[]).map((value) => JSON.stringify(value)));
      const groups = new Map<string, { key: JsonValue; score: number; count: number; best: JsonObject }>();
      items.forEach((item, index) => {
        if (!isJsonObject(item))
          throw invalidInput(`list.rank: items[${index}] must be an object, got ${describe(item)}`);
        const key = item[keyField];
        const score = item[scoreField];
        if (key === undefined) throw invalidInput(`list.rank: items[${index}] has no ${JSON.stringify(keyField)}`);
        if (typeof score !== "number")
          throw invalidInput(
            `list.rank: items[${index}].${scoreField} must be a number, got ${describe(score ?? null)}`,
          );
        const id = JSON.stringify(key);
        if (excluded.has(id)) return;
        const group = groups.get(id);
        if (group === undefined) groups.set(id, { key, score, count: 1, best: item });
        else {
          group.count++;
          if (score > group.score) Object.assign(group, { score, best: item });
        }
      });
      // Map order is first appearance, and the sort is stable, so ties keep that order.
      const ranked = [...groups.values()].sort((a, b) => b.score - a.score).slice(0, limit);
      return { groups: ranked.map((group) => ({ ...group })) };
    },
  };
}
