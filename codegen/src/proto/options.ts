import {
  getOption,
  hasOption,
  type DescExtension,
  type DescField,
  type DescFile,
  type DescMethod,
  type DescService,
} from "@bufbuild/protobuf";

/**
 * Reads the options the generator depends on (google.api.http, google.api.field_behavior and our
 * platform.api.v1 options) from the descriptors of the request itself. The extensions are found
 * in the files protoc hands us, so the generator needs no generated code of its own and can
 * rebuild `gen/` from nothing.
 */

/** The parts of google.api.HttpRule that the generator reads. */
export interface HttpRuleOption {
  readonly pattern:
    | { readonly case: "get" | "put" | "post" | "delete" | "patch"; readonly value: string }
    | { readonly case: "custom"; readonly value: { readonly kind: string; readonly path: string } }
    | { readonly case: undefined; readonly value?: undefined };
  readonly body: string;
  readonly responseBody: string;
  readonly additionalBindings: readonly HttpRuleOption[];
}

/** google.api.FieldBehavior values the generator reads. */
export const FieldBehavior = { OPTIONAL: 1, REQUIRED: 2, OUTPUT_ONLY: 3, INPUT_ONLY: 4, IMMUTABLE: 5 } as const;

/** platform.api.v1.StreamFraming values. */
const StreamFramingValue = { SSE: 1, NDJSON: 2 } as const;

export interface OptionReader {
  httpRule(method: DescMethod): HttpRuleOption | undefined;
  fieldBehaviors(field: DescField): readonly number[];
  streamFraming(method: DescMethod): "sse" | "ndjson" | undefined;
  /** platform.api.v1.stream_error_event of a method: a dotted field path, or undefined when unset or empty. */
  streamErrorEvent(method: DescMethod): string | undefined;
  isPublic(method: DescMethod): boolean;
  organizationHeader(service: DescService): boolean;
  listener(service: DescService): Listener;
  /** platform.api.v1.query_casing of a method: "snake" or the default "camel". */
  queryCasing(method: DescMethod): QueryCasing;
  /** platform.api.v1.query_parameter of a request field, absent fields at their defaults. */
  queryParameter(field: DescField): QueryParameterOption;
}

/** Casing of the published query parameter names of a method's HTTP routes. */
export type QueryCasing = "camel" | "snake";

/** The parts of platform.api.v1.QueryParameter that the generator reads. */
export interface QueryParameterOption {
  readonly aliases: readonly string[];
  readonly enumNumber: boolean;
  readonly httpIgnored: boolean;
}

/** platform.api.v1.QueryCasing values. */
const QueryCasingValue = { SNAKE: 1 } as const;

/** The server listener whose HTTP routes serve a service. */
export type Listener = "api" | "data";

/** platform.api.v1.Listener values. */
const ListenerValue = { DATA: 1 } as const;

/** Builds an option reader over every file of a code generator request. */
export function createOptionReader(allFiles: readonly DescFile[]): OptionReader {
  const extensions = new Map<string, DescExtension>();
  for (const file of allFiles) {
    for (const ext of file.extensions) extensions.set(ext.typeName, ext);
  }
  const find = (typeName: string) => extensions.get(typeName);
  const http = find("google.api.http");
  const fieldBehavior = find("google.api.field_behavior");
  const streamFraming = find("platform.api.v1.stream_framing");
  const streamErrorEvent = find("platform.api.v1.stream_error_event");
  const methodAuth = find("platform.api.v1.method_auth");
  const serviceAuth = find("platform.api.v1.service_auth");
  const listener = find("platform.api.v1.listener");
  const queryCasing = find("platform.api.v1.query_casing");
  const queryParameter = find("platform.api.v1.query_parameter");

  // getOption is typed for generated extensions; these come from descriptors, so the value
  // shapes are asserted here, at the one boundary.
  const read = <T>(desc: DescMethod | DescField | DescService, ext: DescExtension | undefined): T | undefined =>
    ext && hasOption(desc as never, ext as never) ? (getOption(desc as never, ext as never) as T) : undefined;

  return {
    httpRule: (method) => read<HttpRuleOption>(method, http),
    fieldBehaviors: (field) => read<number[]>(field, fieldBehavior) ?? [],
    streamFraming(method) {
      const value = read<number>(method, streamFraming);
      if (value === StreamFramingValue.SSE) return "sse";
      if (value === StreamFramingValue.NDJSON) return "ndjson";
      return undefined;
    },
    streamErrorEvent: (method) => read<string>(method, streamErrorEvent) || undefined,
    isPublic: (method) => read<{ public: boolean }>(method, methodAuth)?.public ?? false,
    organizationHeader: (service) =>
      read<{ organizationHeader: boolean }>(service, serviceAuth)?.organizationHeader ?? false,
    listener: (service) => (read<number>(service, listener) === ListenerValue.DATA ? "data" : "api"),
    queryCasing: (method) => (read<number>(method, queryCasing) === QueryCasingValue.SNAKE ? "snake" : "camel"),
    queryParameter(field) {
      const value = read<Partial<QueryParameterOption>>(field, queryParameter);
      return {
        aliases: value?.aliases ?? [],
        enumNumber: value?.enumNumber ?? false,
        httpIgnored: value?.httpIgnored ?? false,
      };
    },
  };
}
