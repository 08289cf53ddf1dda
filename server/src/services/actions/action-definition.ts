/**
 * A catalog action: a shipped script template plus what the actions service needs to offer and run
 * it (server/actions/<id>.json; server/actions/README.md describes the format).
 */
export interface ActionDefinition {
  readonly id: string;
  /** The script template (server/templates) the action runs. */
  readonly template: string;
  readonly name: string;
  /** The template's description. */
  readonly description: string;
  readonly icon: string;
  readonly visibility: string;
  readonly invoke: "sync" | "async";
  /** Selection pillars the action is listed for; "" stands for the agentic (none) selection. */
  readonly pillars: readonly string[];
  /** Selection shapes (the Selection oneof member names) the action accepts. */
  readonly shapes: readonly string[];
  readonly acceptedContentTypes: readonly string[];
  readonly acceptedExtensions: readonly string[];
  /** Capabilities the server must have configured, such as "llm". */
  readonly requires: readonly string[];
  /** Template input name -> the binding the service fills it with (e.g. "object.text"). */
  readonly bind: Readonly<Record<string, string>>;
  readonly output: {
    /** An OutputKind name without its prefix: JSON, TEXT, MARKDOWN, TABLE_ROWS, FILE, CHUNKS, NONE. */
    readonly kind: string;
    /** inline | file | table | chunks */
    readonly route: string;
    /** The output member routed (inline); absent: the whole output. */
    readonly field?: string;
    /** Extension of a sibling output file. */
    readonly extension?: string;
  };
}
