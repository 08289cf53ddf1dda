import type { DescService } from "@bufbuild/protobuf";
import { parsePathTemplate } from "./path-template/parse.js";
import type { PathTemplate } from "./path-template/path-template.js";

/** How a server stream is framed on its HTTP route. */
export type StreamFraming = "sse" | "ndjson";

/**
 * One google.api.http binding of one RPC, as data. The generator writes a table of these per
 * service; the server compiles every table into one matcher, and the SDK and the OpenAPI
 * documents read the same entries, so the three cannot drift apart.
 */
export interface HttpRoute {
  /** The method's local name in the generated service descriptor (`createThread`). */
  readonly rpc: string;
  /** HTTP method: GET, POST, PUT, PATCH, DELETE, or a custom verb's method. */
  readonly httpMethod: string;
  /** The parsed path template. */
  readonly template: PathTemplate;
  /**
   * Where the request message comes from: `""` (no body: every field not in the path comes from
   * the query), `"*"` (the body is the request message, minus path fields), or the proto name of
   * one top-level field that the body fills (the rest from the query).
   */
  readonly body: string;
  /** Proto name of the response field sent as the body, or `""` for the whole response. */
  readonly responseBody: string;
  /**
   * Proto names of the top-level request fields that may come from the query string. Nested
   * fields of a message field are addressed with dots (`filter.status`).
   */
  readonly queryFields: readonly string[];
  /**
   * Casing of the query names the contract publishes: `"snake"` for the proto names; absent for
   * the JSON (camelCase) names. The route accepts both either way; a caller sends this one.
   */
  readonly queryCasing?: "snake";
  /** Further query names of top-level query fields: alias -> proto name of the field. */
  readonly queryAliases?: Readonly<Record<string, string>>;
  /** Top-level query fields whose value the contract publishes as the enum number. */
  readonly queryEnumNumbers?: readonly string[];
  /**
   * Proto names of top-level request fields the route ignores when they appear in the query
   * (gRPC-only paging of a list whose HTTP answer holds every row).
   */
  readonly queryIgnored?: readonly string[];
  /** Framing of a server stream; absent for unary methods. */
  readonly streamFraming?: StreamFraming;
  /**
   * The method's (platform.api.v1.stream_error_event): the proto field path (`failed.error`) of
   * the message a failure after the first one is folded into. When present the stream always
   * ends with one of its own messages, and the route is served only in its declared framing.
   */
  readonly streamErrorEvent?: string;
  /**
   * Also write unset message and proto3 `optional` fields of the answer, as `null` (the data
   * listener's routes: its contract emits every field). Fields with implicit presence are written
   * at their defaults on every route.
   */
  readonly emitUnpopulated?: true;
  /** True for an entry from `additional_bindings`. */
  readonly additionalBinding: boolean;
}

/** Every HTTP route of one service. */
export interface ServiceHttpRoutes<S extends DescService = DescService> {
  readonly service: S;
  readonly routes: readonly HttpRoute[];
}

/** A route as a generated table writes it: the template as its text, parsed when the table loads. */
export type HttpRouteSource = Omit<HttpRoute, "template"> & { readonly template: string };

/**
 * The route table of a service, its templates parsed once, when the generated module loads. The
 * generator parsed every template with the same parser before writing it, so this cannot throw
 * for a generated table.
 */
export function defineHttpRoutes<S extends DescService>(
  service: S,
  routes: readonly HttpRouteSource[],
): ServiceHttpRoutes<S> {
  return { service, routes: routes.map((route) => ({ ...route, template: parsePathTemplate(route.template) })) };
}

/** Who may call the methods of a service, from our `platform.api.v1` options. */
export interface ServiceAccess {
  /** Every authenticated method also needs the `x-organization-name` header. */
  readonly organizationHeader: boolean;
  /** Local names of the methods that need no credentials. */
  readonly publicMethods: readonly string[];
}
