import { formatPathPattern } from "./format.js";
import type { PathRoute } from "./path-template.js";

/**
 * Finds routes the matcher could only choose between by their order, which it refuses to do.
 *
 * The matcher ranks candidates segment by segment (literal, then `*`, then `**`) and prefers a route
 * with a custom verb over reading the `:` as part of a value. Two templates that differ anywhere get
 * ranked by that rule, so they can coexist: `/v1/healthz` beside `/v1/{id}`, `/a/{x}/c` beside `/a/b/{y}`.
 * The rule cannot rank two templates with the same *shape* (the same literals, `*` and `**` in the same
 * places and the same verb) because they match exactly the same paths; variable names and how segments
 * are grouped into variables do not change which paths match (see `formatPathPattern`). `/v1/{a}` and `/v1/{b}`,
 * `/v1/{a}/x` and `/v1/{b=*}/x`, `/v1/**` and `/v1/{x=**}` are such pairs. With the same HTTP method
 * that is a bug in the route table (usually two RPCs claiming one URL), reported at start-up instead
 * of silently routing to whichever was registered first.
 *
 * @returns every ambiguous pair, each pair in input order, pairs in the order their second route appears.
 */
export function findAmbiguousRoutes<T>(routes: readonly PathRoute<T>[]): [PathRoute<T>, PathRoute<T>][] {
  const byKey = new Map<string, PathRoute<T>[]>();
  const pairs: [PathRoute<T>, PathRoute<T>][] = [];
  for (const route of routes) {
    // Method and verb cannot contain a space. The verb is repeated on its own because the pattern
    // alone cannot tell `/x/a:b` (literal `a`, verb `b`) from `{n=x/a:b}` (literal `a:b`, no verb).
    const key = `${route.httpMethod} ${route.template.verb ?? ""} ${formatPathPattern(route.template)}`;
    const earlier = byKey.get(key);
    if (earlier === undefined) {
      byKey.set(key, [route]);
      continue;
    }
    for (const other of earlier) pairs.push([other, route]);
    earlier.push(route);
  }
  return pairs;
}
