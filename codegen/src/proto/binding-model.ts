import type { DescField, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel as IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import type { HttpRoute, StreamFraming } from "../../runtime/http-route.js";
import { parsePathTemplate } from "../../runtime/path-template/index.js";
import type { Listener, OptionReader } from "./options.js";
import { GenerationError } from "../generation-error.js";
import { streamErrorEventFields } from "./stream-error-event.js";

/**
 * The one model of a service that all four emitters read: routes, service glue, SDK clients
 * and OpenAPI documents. Every rule about bindings is checked here, once, so an emitter never
 * has to second-guess what it is given.
 */
export interface ServiceModel {
  readonly service: DescService;
  readonly organizationHeader: boolean;
  /** The listener whose HTTP routes serve the service. */
  readonly listener: Listener;
  readonly methods: readonly MethodModel[];
}

export type Idempotency = "no-side-effects" | "idempotent" | "unknown";

export interface MethodModel {
  readonly method: DescMethod;
  readonly idempotency: Idempotency;
  readonly isPublic: boolean;
  readonly streamFraming: StreamFraming | undefined;
  /**
   * (platform.api.v1.stream_error_event): the fields, outermost first, of the message a failure
   * after the stream's first message is folded into; undefined when failures end the stream.
   */
  readonly streamErrorEvent: readonly DescField[] | undefined;
  readonly routes: readonly HttpRoute[];
  readonly pagination: PaginationModel | undefined;
}

/** AIP-158 pagination, recognised by field names alone (`page_token` in, `next_page_token` out). */
export interface PaginationModel {
  /** The request's `page_size` field, when it has one. */
  readonly pageSize: DescField | undefined;
  readonly pageToken: DescField;
  readonly nextPageToken: DescField;
  /** The one repeated message field of the response. */
  readonly items: DescField & { fieldKind: "list"; listKind: "message" };
}

export function buildServiceModel(service: DescService, options: OptionReader): ServiceModel {
  return {
    service,
    organizationHeader: options.organizationHeader(service),
    listener: options.listener(service),
    methods: service.methods.map((method) => buildMethodModel(method, options, options.listener(service))),
  };
}

function buildMethodModel(method: DescMethod, options: OptionReader, listener: Listener): MethodModel {
  const streamFraming = options.streamFraming(method);
  const errorEventPath = options.streamErrorEvent(method);
  const streamErrorEvent = errorEventPath === undefined ? undefined : streamErrorEventFields(method, errorEventPath);
  // The data listener's contract writes every field of an answer, unset ones included.
  const routes = buildRoutes(method, options, streamFraming)
    .map((route) => (listener === "data" ? { ...route, emitUnpopulated: true as const } : route))
    .map((route) => (errorEventPath === undefined ? route : { ...route, streamErrorEvent: errorEventPath }));
  const where = `rpc ${method.parent.typeName}.${method.name}`;
  if (routes.length > 0 && (method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming")) {
    throw new GenerationError(`${where}: a ${method.methodKind} method cannot have an HTTP binding`);
  }
  if (method.methodKind === "server_streaming" && routes.length > 0 && !streamFraming) {
    throw new GenerationError(`${where}: a server stream with an HTTP binding needs (platform.api.v1.stream_framing)`);
  }
  if (method.methodKind !== "server_streaming" && streamFraming) {
    throw new GenerationError(`${where}: (platform.api.v1.stream_framing) is only for server streams`);
  }
  return {
    method,
    idempotency: idempotencyOf(method),
    isPublic: options.isPublic(method),
    streamFraming,
    streamErrorEvent,
    routes,
    pagination: paginationOf(method),
  };
}

function idempotencyOf(method: DescMethod): Idempotency {
  switch (method.idempotency) {
    case IdempotencyLevel.NO_SIDE_EFFECTS:
      return "no-side-effects";
    case IdempotencyLevel.IDEMPOTENT:
      return "idempotent";
    default:
      return "unknown";
  }
}

function buildRoutes(method: DescMethod, options: OptionReader, streamFraming: StreamFraming | undefined): HttpRoute[] {
  const rule = options.httpRule(method);
  if (!rule) return [];
  const where = `rpc ${method.parent.typeName}.${method.name}`;
  const bindings = [rule, ...rule.additionalBindings];
  for (const nested of rule.additionalBindings) {
    if (nested.additionalBindings.length > 0) {
      throw new GenerationError(`${where}: additional_bindings must not nest`);
    }
  }
  return bindings.map((binding, index) => {
    const { httpMethod, path } = patternOf(binding, where);
    let template;
    try {
      template = parsePathTemplate(path);
    } catch (error) {
      throw new GenerationError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const input = method.input;
    for (const variable of template.variables) {
      const field = resolveFieldPath(input, variable.fieldPath);
      if (!field)
        throw new GenerationError(
          `${where}: path variable {${variable.fieldPath}} names no field of ${input.typeName}`,
        );
      if (field.fieldKind !== "scalar" && field.fieldKind !== "enum") {
        throw new GenerationError(
          `${where}: path variable {${variable.fieldPath}} must be a singular scalar or enum field`,
        );
      }
    }
    const body = binding.body;
    if (body !== "" && body !== "*") {
      const field = input.fields.find((f) => f.name === body);
      if (!field) throw new GenerationError(`${where}: body "${body}" names no top-level field of ${input.typeName}`);
      if (field.fieldKind === "list")
        throw new GenerationError(`${where}: body "${body}" must not be a repeated field`);
    }
    if (httpMethod === "GET" && body !== "") {
      throw new GenerationError(`${where}: a GET binding cannot have a body`);
    }
    const responseBody = binding.responseBody;
    if (responseBody !== "" && !method.output.fields.some((f) => f.name === responseBody)) {
      throw new GenerationError(
        `${where}: response_body "${responseBody}" names no top-level field of ${method.output.typeName}`,
      );
    }
    // A field bound whole by the path or the body never comes from the query; a message field
    // of which the path binds only a sub-field may still take its other sub-fields from it.
    const pathFields = new Set(template.variables.map((v) => v.fieldPath));
    const candidates = body === "*" ? [] : input.fields.filter((f) => f.name !== body && !pathFields.has(f.name));
    const query = queryNaming(method, candidates, options, where);
    const route: HttpRoute = {
      rpc: method.localName,
      httpMethod,
      template,
      body,
      responseBody,
      ...query,
      ...(streamFraming ? { streamFraming } : {}),
      additionalBinding: index > 0,
    };
    return route;
  });
}

type QueryNaming = Pick<
  HttpRoute,
  "queryFields" | "queryCasing" | "queryAliases" | "queryEnumNumbers" | "queryIgnored"
>;

/**
 * Which top-level fields a route reads from the query and under which names, from
 * (platform.api.v1.query_casing) and (platform.api.v1.query_parameter). An alias may not shadow a
 * field's own name, and the per-field options only make sense on fields the query can set.
 */
function queryNaming(method: DescMethod, candidates: readonly DescField[], options: OptionReader, where: string) {
  const casing = options.queryCasing(method);
  const readable = new Set(candidates.map((f) => f.name));
  const taken = new Set(method.input.fields.flatMap((f) => [f.name, f.jsonName]));
  const queryFields: string[] = [];
  const queryIgnored: string[] = [];
  const queryEnumNumbers: string[] = [];
  const queryAliases: Record<string, string> = {};
  for (const field of method.input.fields) {
    const option = options.queryParameter(field);
    const declared = option.aliases.length > 0 || option.enumNumber || option.httpIgnored;
    if (!declared) {
      if (readable.has(field.name)) queryFields.push(field.name);
      continue;
    }
    const at = `${where}: field ${field.name}`;
    if (
      option.enumNumber &&
      !(field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum"))
    ) {
      throw new GenerationError(`${at}: enum_number is only for enum fields`);
    }
    if (option.httpIgnored && (option.aliases.length > 0 || option.enumNumber)) {
      throw new GenerationError(`${at}: an http_ignored field takes no other query option`);
    }
    // A field this binding takes from the path or the body: the options concern other bindings.
    if (!readable.has(field.name)) continue;
    if (option.httpIgnored) {
      queryIgnored.push(field.name);
      continue;
    }
    queryFields.push(field.name);
    if (option.enumNumber) queryEnumNumbers.push(field.name);
    for (const alias of option.aliases) {
      for (const name of new Set([alias, snakeToCamel(alias)])) {
        if (!/^[a-z][a-z0-9_]*$/i.test(alias) || taken.has(name) || name in queryAliases) {
          throw new GenerationError(`${at}: query alias "${name}" is not a free parameter name`);
        }
        queryAliases[name] = field.name;
      }
    }
  }
  return {
    queryFields,
    ...(casing === "snake" ? { queryCasing: "snake" as const } : {}),
    ...(Object.keys(queryAliases).length > 0 ? { queryAliases } : {}),
    ...(queryEnumNumbers.length > 0 ? { queryEnumNumbers } : {}),
    ...(queryIgnored.length > 0 ? { queryIgnored } : {}),
  } satisfies QueryNaming;
}

function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function patternOf(rule: HttpRuleOption, where: string): { httpMethod: string; path: string } {
  const pattern = rule.pattern;
  switch (pattern.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      return { httpMethod: pattern.case.toUpperCase(), path: pattern.value };
    case "custom":
      return { httpMethod: pattern.value.kind.toUpperCase(), path: pattern.value.path };
    default:
      throw new GenerationError(`${where}: google.api.http has no pattern`);
  }
}

type HttpRuleOption = NonNullable<ReturnType<OptionReader["httpRule"]>>;

/** Resolves a dotted proto field path (`parent.name`) in a message. */
export function resolveFieldPath(message: DescMessage, fieldPath: string): DescField | undefined {
  let current: DescMessage | undefined = message;
  let field: DescField | undefined;
  for (const name of fieldPath.split(".")) {
    if (!current) return undefined;
    field = current.fields.find((f) => f.name === name);
    if (!field) return undefined;
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return field;
}

function paginationOf(method: DescMethod): PaginationModel | undefined {
  if (method.methodKind !== "unary") return undefined;
  const pageToken = method.input.fields.find((f) => f.name === "page_token" && f.scalar !== undefined);
  const nextPageToken = method.output.fields.find((f) => f.name === "next_page_token");
  if (!pageToken || !nextPageToken) return undefined;
  const items = method.output.fields.filter(
    (f): f is PaginationModel["items"] => f.fieldKind === "list" && f.listKind === "message",
  );
  if (items.length !== 1) {
    throw new GenerationError(
      `rpc ${method.parent.typeName}.${method.name}: a paginated response needs exactly one repeated message field, found ${items.length}`,
    );
  }
  const pageSize = method.input.fields.find((f) => f.name === "page_size");
  return { pageSize, pageToken, nextPageToken, items: items[0]! };
}

/** The leading comment of a descriptor, trimmed, or "" when it has none. */
export function commentOf(desc: Parameters<typeof getComments>[0]): string {
  const text = getComments(desc).leading ?? "";
  return text
    .split("\n")
    .map((line) => line.replace(/^ /, "").trimEnd())
    .join("\n")
    .trim();
}
