import { type PathRoute, type PathTemplate, isMultiSegmentVariable } from "./path-template.js";

/**
 * The compiled form of a route table: a trie over template segments, built once when the server
 * starts so that matching a request is a walk over maps, never a regular expression.
 *
 * Variables do not appear in the trie; they only name ranges of segments, which are read back from the
 * winning route's `captures` plan after the walk. This keeps `/v1/{a}` and `/v1/{b=*}` on the same node,
 * which is why the ambiguity check must run before the trie is built.
 */
export interface TrieNode {
  /** Children for literal segments, keyed by the literal as written in the template. */
  readonly literals: Map<string, TrieNode>;
  /** Child for `*`, whether bare or inside a variable. */
  wildcard: TrieNode | undefined;
  /** Child for `**`; it is always the last segment, so this node only ever has `routes`. */
  deep: TrieNode | undefined;
  /** Routes ending here: verb (`""` for none) to HTTP method to route. */
  readonly routes: Map<string, Map<string, CompiledRoute<unknown>>>;
}

/** A route with its capture plan precomputed. */
export interface CompiledRoute<T> {
  readonly target: T;
  readonly captures: readonly CapturePlan[];
}

/** Where one variable's value is in a request split into segments. */
export interface CapturePlan {
  readonly fieldPath: string;
  /** First request segment captured; equal to the template segment index (`**` is always last). */
  readonly start: number;
  /** One past the last request segment captured, or `"rest"` when the variable ends in `**`. */
  readonly end: number | "rest";
  /** Multi-segment variables keep `%2F` escaped, see `percent-encoding.ts`. */
  readonly multiSegment: boolean;
}

/** An empty node; exported so the matcher can make the root. */
export function createTrieNode(): TrieNode {
  return { literals: new Map(), wildcard: undefined, deep: undefined, routes: new Map() };
}

/**
 * Adds one route. A second route with the same method, verb and segment shape would overwrite the
 * first, so callers reject such tables with `findAmbiguousRoutes` beforehand; this keeps the first.
 */
export function insertRoute<T>(root: TrieNode, route: PathRoute<T>): void {
  let node = root;
  for (const segment of route.template.segments) {
    switch (segment.kind) {
      case "literal": {
        let child = node.literals.get(segment.value);
        if (child === undefined) node.literals.set(segment.value, (child = createTrieNode()));
        node = child;
        break;
      }
      case "wildcard":
        node = node.wildcard ??= createTrieNode();
        break;
      case "deep-wildcard":
        node = node.deep ??= createTrieNode();
        break;
    }
  }
  const verb = route.template.verb ?? "";
  let byMethod = node.routes.get(verb);
  if (byMethod === undefined) node.routes.set(verb, (byMethod = new Map()));
  if (!byMethod.has(route.httpMethod)) {
    byMethod.set(route.httpMethod, { target: route.target, captures: planCaptures(route.template) });
  }
}

function planCaptures(template: PathTemplate): CapturePlan[] {
  return template.variables.map((variable) => {
    const last = template.segments[variable.end - 1];
    return {
      fieldPath: variable.fieldPath,
      start: variable.start,
      end: last?.kind === "deep-wildcard" ? "rest" : variable.end,
      multiSegment: isMultiSegmentVariable(template, variable),
    };
  });
}
