import type { RestPlane, ServiceBinding } from "@platform/codegen/runtime";
import {
  isHttpMethod,
  operationsOf,
  pruneUnusedComponents,
  pruneUnusedTags,
  type OpenApiDocument,
  type PathItem,
} from "./openapi-document.js";

/** One route a listener answers: its method and path template, as its route table has them. */
export interface ServedRoute {
  readonly method: string;
  /** `/v1/script/threads/{thread_id}`, in the coordinates of the document it is checked against. */
  readonly path: string;
}

/** The HTTP routes of services: a service router's `bindings`, or generated `<Service>Routes`. */
export function servedRoutesOfBindings(bindings: readonly Pick<ServiceBinding, "routes">[]): ServedRoute[] {
  return bindings.flatMap((binding) =>
    binding.routes.map((route) => ({ method: route.httpMethod, path: route.template.source })),
  );
}

/** The operations of a REST plane's route table, relative to its base path as its document's paths are. */
export function servedRoutesOfRestPlane(plane: RestPlane): ServedRoute[] {
  return plane.operations.map((operation) => ({ method: operation.httpMethod, path: operation.template.source }));
}

/**
 * The document restricted to what the listener answers: an operation stays only when its method
 * and path are in `served`, a path only with one of its operations, and only the components and
 * tags those operations use. Variable names do not take part in the match (`{name}` and
 * `{name=**}` are one segment pattern to the router either way). A path's own `servers` go: the
 * contract's name every listener, the restricted document is one listener's and names it once.
 */
export function restrictToServedRoutes(document: OpenApiDocument, served: readonly ServedRoute[]): OpenApiDocument {
  const routes = new Set(served.map((route) => routeKey(route.method, route.path)));
  const paths: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    const operations = operationsOf(item).filter(([method]) => routes.has(routeKey(method, path)));
    if (operations.length === 0) continue;
    const shared = Object.entries(item).filter(([key]) => !isHttpMethod(key) && key !== "servers");
    paths[path] = Object.fromEntries([...shared, ...operations]);
  }
  return pruneUnusedTags(pruneUnusedComponents({ ...document, paths }));
}

function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`;
}
