/** What went wrong, kept as fields so callers (the generator, the SDK) can report it their own way. */
export interface PathTemplateErrorDetails {
  /** The template text involved, as written in the proto. */
  readonly template: string;
  /** Human-readable cause, without the template (the message adds it). */
  readonly reason: string;
  /** Zero-based character offset into `template` where parsing failed. */
  readonly position?: number;
  /** The request field whose value could not be expanded. */
  readonly fieldPath?: string;
}

/**
 * The one error type of the path-template module: bad template text, a route table the matcher cannot
 * decide between, or a value that cannot be placed into a URL.
 *
 * The message always quotes the template, then the position or field, then the reason, because it ends
 * up in generator output and SDK exceptions where the reader has no other context.
 */
export class PathTemplateError extends Error {
  override readonly name = "PathTemplateError";
  readonly template: string;
  readonly reason: string;
  readonly position: number | undefined;
  readonly fieldPath: string | undefined;

  constructor(details: PathTemplateErrorDetails) {
    super(describe(details));
    this.template = details.template;
    this.reason = details.reason;
    this.position = details.position;
    this.fieldPath = details.fieldPath;
  }
}

function describe(details: PathTemplateErrorDetails): string {
  let where = `path template ${JSON.stringify(details.template)}`;
  if (details.position !== undefined) where += ` at position ${details.position}`;
  if (details.fieldPath !== undefined) where += `, field ${JSON.stringify(details.fieldPath)}`;
  return `${where}: ${details.reason}`;
}
