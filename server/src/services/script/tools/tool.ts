import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

export type { JsonObject, JsonValue };

/**
 * JSON Schema type name of a tool parameter (catalog.proto ToolParam `type`). The empty string
 * means "any JSON value", as a JSON Schema with no `type` keyword does: a few native parameters
 * (an HTTP body, the data a CEL expression reads) take any JSON.
 */
export type ToolParamType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "";

/** One input or output parameter of a tool. */
export interface ToolParam {
  /** Key in the tool's JSON input or output object. */
  readonly name: string;
  readonly type: ToolParamType;
  /** Inputs: a call must supply it. Outputs: the tool always returns it. */
  readonly required: boolean;
  /** Applied by the registry when an optional input is omitted. */
  readonly defaultValue?: JsonValue;
  readonly description: string;
}

/** Where and how a tool runs (catalog.proto ToolRuntime, with units in the names). */
export interface ToolRuntime {
  /** Function, module or command the call enters. */
  readonly entrypoint: string;
  /** `native` for built-ins; `python`, `typescript`, `rust` for compute tools. */
  readonly language: string;
  /** Container image reference; empty for native tools. */
  readonly image: string;
  /** Limit on one call; 0 means the registry's default. The registry aborts the call past it. */
  readonly timeoutMs: number;
  /** Memory for one call in MiB; 0 means the platform default. */
  readonly memoryMiB: number;
  /** GPU class in Modal's form (`T4`, `H100:2`); empty for none. */
  readonly gpu: string;
}

export interface ToolDefinition {
  /** Dotted name execute steps call the tool by, such as `http.request`. */
  readonly name: string;
  /** Identifier reported in ListTools; defaults to `<name>@<version>`. */
  readonly toolId?: string;
  readonly version: string;
  readonly description: string;
  readonly inputs: readonly ToolParam[];
  readonly outputs: readonly ToolParam[];
  readonly runtime: ToolRuntime;
  /** When this version of the tool was registered, in epoch milliseconds. */
  readonly createdAtMs: number;
}

/**
 * The thread's memory limit as a tool sees it: a tool that reads data into memory (a response
 * body) reports the bytes as they arrive, and stops when `reserve` throws: the thread holds or
 * reads too much already, and the error says which step and which limit.
 */
export interface MemoryReservation {
  reserve(bytes: number): void;
}

/** What a tool call may use besides its input. */
export interface ToolContext {
  /** Aborted when the call times out or its thread is cancelled; tools stop work when it fires. */
  readonly signal: AbortSignal;
  /**
   * `thread_id:step_path` (see toolIdempotencyKey): the same for every retry of one step, so
   * tools pass it on to targets that deduplicate (an `idempotency-key` header, for instance).
   */
  readonly idempotencyKey: string;
  readonly threadId: string;
  readonly stepPath: string;
  /** The thread's merged environment (tenant variables under the script overlay). */
  readonly env: Readonly<Record<string, string>>;
  /** Counts what the call reads into memory against its thread's limit; absent, nothing is counted. */
  readonly memory?: MemoryReservation;
  /** Stores an artifact of the thread in object storage; the same name overwrites. */
  writeArtifact(name: string, contentType: string, bytes: Uint8Array): Promise<void>;
}

/**
 * A tool the registry can run. `input` has been checked against `inputs` (types, required
 * parameters, no unknown names) and carries the defaults of omitted optional inputs; failures are
 * thrown as ToolError.
 */
export interface Tool extends ToolDefinition {
  invoke(input: JsonObject, context: ToolContext): Promise<JsonValue>;
}

/** The idempotency key of one step's tool call: stable across the step's retries. */
export function toolIdempotencyKey(threadId: string, stepPath: string): string {
  return `${threadId}:${stepPath}`;
}
