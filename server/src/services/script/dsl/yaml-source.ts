import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import type { Document, Node as YamlNode } from "yaml";
import type { JsonValue } from "./cel-json.js";
import type { ScriptProblem } from "./script-validation-error.js";
import { escapePointer } from "./templates.js";

/**
 * Reads a script source (YAML 1.2; JSON is YAML) into a plain JSON value plus the source
 * position of every node, keyed by JSON Pointer, so that every later check can say `line:column`.
 *
 * Only the JSON subset is accepted: map keys must be strings; scalars must be strings, finite
 * numbers, booleans or null (no `.nan`, `!!binary`, custom tags). Anchors and aliases work (an
 * alias is read as a copy of its anchor), within a budget of nodes that stops alias bombs; YAML
 * merge keys (`<<`) are not interpreted. One document per source.
 */

export interface Position {
  line: number;
  column: number;
}

export interface SourceTree {
  value: JsonValue;
  /** Position of each value, by JSON Pointer ("" is the root). */
  positions: ReadonlyMap<string, Position>;
  /** Position of each map key, by the pointer of its value. */
  keyPositions: ReadonlyMap<string, Position>;
}

/** Nodes read, counting every alias expansion. */
export const MAX_NODES = 200_000;
/** Nesting of maps and sequences. */
export const MAX_DEPTH = 64;

export type SourceResult = { tree: SourceTree; problems: [] } | { tree?: undefined; problems: ScriptProblem[] };

export function readSource(source: string): SourceResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined): Position => {
    const { line, col } = lineCounter.linePos(offset ?? 0);
    return { line, column: col };
  };
  const problems: ScriptProblem[] = [...document.errors, ...document.warnings].map((error) => ({
    path: "",
    ...at(error.pos[0]),
    message: `YAML: ${error.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "")}`,
  }));
  if (problems.length > 0) return { problems };
  if (document.contents === null)
    return { problems: [{ path: "", line: 1, column: 1, message: "the document is empty" }] };

  const positions = new Map<string, Position>();
  const keyPositions = new Map<string, Position>();
  const found: ScriptProblem[] = [];
  const report = (pointer: string, position: Position, message: string): null => {
    found.push({ path: pointer, ...position, message });
    return null;
  };
  let budget = MAX_NODES;

  const read = (node: unknown, pointer: string, depth: number, fallback: Position): JsonValue => {
    if (isAlias(node)) return read(node.resolve(document as Document), pointer, depth, fallback);
    const position = hasRange(node) ? at(node.range[0]) : fallback;
    positions.set(pointer, position);
    if (--budget < 0)
      throw new SourceProblem(
        pointer,
        position,
        `the document expands to more than ${MAX_NODES} nodes (through aliases?)`,
      );
    if (depth > MAX_DEPTH)
      throw new SourceProblem(pointer, position, `values are nested more than ${MAX_DEPTH} levels deep`);
    if (node === null || node === undefined) return null;
    if (isScalar(node)) {
      const problem = scalarProblem(node.value, node.tag);
      return problem === undefined ? (node.value as JsonValue) : report(pointer, position, problem);
    }
    if (isSeq(node)) return node.items.map((item, index) => read(item, `${pointer}/${index}`, depth + 1, position));
    if (isMap(node)) {
      const object: { [key: string]: JsonValue } = {};
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const keyPosition = hasRange(pair.key) ? at(pair.key.range[0]) : position;
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof key !== "string") {
          report(
            pointer,
            keyPosition,
            `map keys must be strings${isScalar(pair.key) ? `; quote the key ${JSON.stringify(String(pair.key.source ?? key))}` : ""}`,
          );
          continue;
        }
        const child = `${pointer}/${escapePointer(key)}`;
        keyPositions.set(child, keyPosition);
        const value = read(pair.value, child, depth + 1, keyPosition);
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    return report(pointer, position, "this YAML node has no JSON form");
  };

  try {
    const value = read(document.contents, "", 0, { line: 1, column: 1 });
    if (found.length > 0) return { problems: found };
    return { tree: { value, positions, keyPositions }, problems: [] };
  } catch (error) {
    if (!(error instanceof SourceProblem)) throw error;
    return { problems: [{ path: error.pointer, ...error.position, message: error.message }] };
  }
}

/** The position for a problem at `pointer`: its key, its value, or its nearest ancestor's. */
export function positionOf(tree: SourceTree, pointer: string, prefer: "key" | "value" = "value"): Position {
  let current = pointer;
  while (true) {
    const found = (prefer === "key" ? tree.keyPositions.get(current) : undefined) ?? tree.positions.get(current);
    if (found !== undefined || current === "") return found ?? { line: 1, column: 1 };
    current = current.slice(0, current.lastIndexOf("/"));
  }
}

class SourceProblem extends Error {
  constructor(
    readonly pointer: string,
    readonly position: Position,
    message: string,
  ) {
    super(message);
  }
}

function hasRange(node: unknown): node is YamlNode & { range: [number, number, number] } {
  return typeof node === "object" && node !== null && Array.isArray((node as { range?: unknown }).range);
}

/** Why a scalar is outside JSON, or undefined when it is a JSON value. */
function scalarProblem(value: unknown, tag: string | undefined): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `${value} is not a JSON number`;
  return `a ${tag?.replace("tag:yaml.org,2002:", "!!") ?? typeof value} value has no JSON form; use a string`;
}
