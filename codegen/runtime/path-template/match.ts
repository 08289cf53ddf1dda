import { findAmbiguousRoutes } from "./ambiguity.js";
import { formatPathTemplate } from "./format.js";
import { PathTemplateError } from "./path-template-error.js";
import type { PathRoute } from "./path-template.js";
import { decodePathSegment, decodePathSegmentKeepingSlash, normalizeUnreservedEscapes } from "./percent-encoding.js";
import { type CompiledRoute, type TrieNode, createTrieNode, insertRoute } from "./route-trie.js";

/**
 * What the matcher says about one request. Each kind maps to one server answer, so the transport never
 * guesses: the handler, 405 with `Allow`, 404, or 400 naming the bad segment.
 */
export type MatchResult<T> =
  | {
      readonly kind: "matched";
      readonly target: T;
      /** Field path to decoded value, for every variable of the matched template; `""` when `**` matched nothing. */
      readonly captures: Record<string, string>;
    }
  | { readonly kind: "method-not-allowed"; readonly allowedMethods: string[] }
  | { readonly kind: "not-found" }
  /** A captured segment has malformed percent-encoding (`%zz`) or is not UTF-8 once decoded. */
  | { readonly kind: "bad-path"; readonly reason: string };

/** A compiled route table. */
export interface PathMatcher<T> {
  /**
   * Routes one request.
   *
   * @param httpMethod compared case-sensitively; HEAD is not mapped to GET here, the transport decides.
   * @param rawPath the path as received, still percent-encoded, without query or fragment.
   */
  match(httpMethod: string, rawPath: string): MatchResult<T>;
}

const NOT_FOUND = Object.freeze({ kind: "not-found" as const });

/**
 * Compiles routes into a matcher. The result does not depend on the order of `routes`:
 * - At each segment a literal beats `*`, which beats `**`; when the preferred branch has no route for
 *   the method further down, the next branch is tried (`/a/b/c` beside `/a/{x}/d` still matches
 *   `/a/q/d`, and `DELETE /v1/healthz` reaches `DELETE /v1/{id}` when only `GET /v1/healthz` exists).
 * - A last segment `abc:cancel` is first read as the value `abc` plus the verb `cancel`, when some
 *   route has that verb, then as the value `abc:cancel`. grpc-gateway #1947 shows both readings are
 *   needed: resource IDs may contain `:`, and verb routes must still win when they exist.
 * - Literals are compared after decoding escapes of unreserved characters only (`%76%31` is `v1`);
 *   other escapes never equal a literal.
 * - A trailing slash or an empty segment (`/v1/things/`, `/v1//things`) matches nothing: the spec's
 *   grammar has no empty segments, and guessing a redirect is the transport's business.
 * - Dot segments (`/a/../b`) are not resolved: the path is routed as received, and `..` is then just
 *   a value, never a way to reach another route.
 *
 * @throws PathTemplateError listing every pair of routes that only their order could separate.
 */
export function createPathMatcher<T>(routes: readonly PathRoute<T>[]): PathMatcher<T> {
  const ambiguous = findAmbiguousRoutes(routes);
  const [first] = ambiguous;
  if (first !== undefined) {
    const described = ambiguous.map(([a, b]) => `${describeRoute(a)} and ${describeRoute(b)}`);
    throw new PathTemplateError({
      template: first[1].template.source,
      reason: `ambiguous routes, each pair matches exactly the same requests: ${described.join("; ")}`,
    });
  }
  const root = createTrieNode();
  const verbs = new Set<string>();
  for (const route of routes) {
    insertRoute(root, route);
    if (route.template.verb !== undefined) verbs.add(route.template.verb);
  }
  return {
    match: (httpMethod, rawPath) => match(root, verbs, httpMethod, rawPath) as MatchResult<T>,
  };
}

function describeRoute(route: PathRoute<unknown>): string {
  return `${route.httpMethod} ${formatPathTemplate(route.template)}`;
}

function match(root: TrieNode, verbs: ReadonlySet<string>, method: string, rawPath: string): MatchResult<unknown> {
  const segments = splitPath(rawPath);
  if (segments === undefined) return NOT_FOUND;
  const last = segments.length - 1;
  const lastSegment = segments[last] ?? "";
  const colon = verbs.size > 0 ? lastSegment.lastIndexOf(":") : -1;
  // `:cancel` alone would leave an empty segment, so it can only be a value.
  const verb = colon > 0 ? normalizeUnreservedEscapes(lastSegment.slice(colon + 1)) : "";
  const verbReading = verb !== "" && verbs.has(verb);

  // The split array is ours, so the verb reading swaps the last segment in place instead of copying.
  if (verbReading) {
    segments[last] = lastSegment.slice(0, colon);
    const route = findRoute(root, segments, 0, verb, method);
    if (route !== undefined) return capture(route, segments);
    segments[last] = lastSegment;
  }
  const route = findRoute(root, segments, 0, "", method);
  if (route !== undefined) return capture(route, segments);

  // Failure path only: walk again collecting every method whose template matches, for 405 + Allow.
  const allowed = new Set<string>();
  collectMethods(root, segments, 0, "", allowed);
  if (verbReading) {
    segments[last] = lastSegment.slice(0, colon);
    collectMethods(root, segments, 0, verb, allowed);
  }
  if (allowed.size === 0) return NOT_FOUND;
  return { kind: "method-not-allowed", allowedMethods: [...allowed].sort() };
}

/** Splits `/a/b` into `["a", "b"]`; `undefined` for anything with an empty segment. `/` is no segments. */
function splitPath(rawPath: string): string[] | undefined {
  if (rawPath.charCodeAt(0) !== 0x2f) return undefined;
  if (rawPath.length === 1) return [];
  const segments = rawPath.split("/");
  segments.shift();
  for (const segment of segments) if (segment === "") return undefined;
  return segments;
}

/** Depth-first in precedence order; the first route found for the method wins. */
function findRoute(
  node: TrieNode,
  segments: readonly string[],
  index: number,
  verb: string,
  method: string,
): CompiledRoute<unknown> | undefined {
  if (index === segments.length) {
    return node.routes.get(verb)?.get(method) ?? node.deep?.routes.get(verb)?.get(method);
  }
  if (node.literals.size > 0) {
    const child = node.literals.get(normalizeUnreservedEscapes(segments[index] as string));
    const found = child && findRoute(child, segments, index + 1, verb, method);
    if (found !== undefined) return found;
  }
  if (node.wildcard !== undefined) {
    const found = findRoute(node.wildcard, segments, index + 1, verb, method);
    if (found !== undefined) return found;
  }
  return node.deep?.routes.get(verb)?.get(method);
}

/** The same walk as `findRoute`, without stopping, gathering the methods of every route reached. */
function collectMethods(
  node: TrieNode,
  segments: readonly string[],
  index: number,
  verb: string,
  into: Set<string>,
): void {
  if (index === segments.length) {
    for (const method of node.routes.get(verb)?.keys() ?? []) into.add(method);
  } else {
    const child = node.literals.get(normalizeUnreservedEscapes(segments[index] as string));
    if (child !== undefined) collectMethods(child, segments, index + 1, verb, into);
    if (node.wildcard !== undefined) collectMethods(node.wildcard, segments, index + 1, verb, into);
  }
  for (const method of node.deep?.routes.get(verb)?.keys() ?? []) into.add(method);
}

function capture(route: CompiledRoute<unknown>, segments: readonly string[]): MatchResult<unknown> {
  // No prototype: a proto field may legally be called `__proto__` or `constructor`.
  const captures: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const plan of route.captures) {
    const end = plan.end === "rest" ? segments.length : plan.end;
    let value = "";
    for (let i = plan.start; i < end; i++) {
      const raw = segments[i] as string;
      const decoded = plan.multiSegment ? decodePathSegmentKeepingSlash(raw) : decodePathSegment(raw);
      if (decoded === undefined) {
        return {
          kind: "bad-path",
          reason: `path segment ${JSON.stringify(raw)} for field ${JSON.stringify(plan.fieldPath)} is not valid percent-encoded UTF-8`,
        };
      }
      value = i === plan.start ? decoded : `${value}/${decoded}`;
    }
    captures[plan.fieldPath] = value;
  }
  return { kind: "matched", target: route.target, captures };
}
