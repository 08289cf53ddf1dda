/** Extra structured fields of a log line; nested objects and arrays are allowed. */
export type LogFields = Readonly<Record<string, unknown>>;

/** The server's structured log: one JSON object per line, for log shippers to parse without rules. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export type LogLevel = "info" | "warn" | "error";

export const REDACTED = "[redacted]";

/**
 * Credentials must never reach a log, whoever passes them: a header map logged whole, a config
 * object, a handler's fields. Redaction goes by field name at every depth, so it does not depend on
 * each caller remembering; a false positive (say `keyId`) costs a field, a false negative a leak.
 */
const SENSITIVE_NAMES = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);
const SENSITIVE_PARTS = ["secret", "password", "token", "key"];

export function isSensitiveFieldName(name: string): boolean {
  const lower = name.toLowerCase();
  return SENSITIVE_NAMES.has(lower) || SENSITIVE_PARTS.some((part) => lower.includes(part));
}

/**
 * The verdict for the names of a line's own fields, which the code chooses (the access log line
 * has the same eight on every request): remembered, up to a bound, rather than lower-cased and
 * searched on every line. Nested names, which can come from data, are checked every time.
 */
const topLevelVerdicts = new Map<string, boolean>();
const TOP_LEVEL_VERDICTS_MAX = 512;

function isSensitiveTopLevel(name: string): boolean {
  let verdict = topLevelVerdicts.get(name);
  if (verdict === undefined) {
    verdict = isSensitiveFieldName(name);
    if (topLevelVerdicts.size < TOP_LEVEL_VERDICTS_MAX) topLevelVerdicts.set(name, verdict);
  }
  return verdict;
}

/** The line's own keys: a field of the same name must not overwrite them. */
const RESERVED = new Set(["time", "level", "msg"]);

/**
 * The time of a line, ISO 8601 to the millisecond: formatted once per millisecond rather than once
 * per line (the access log writes a line per request, several per millisecond under load).
 */
let formattedAt = Number.NaN;
let formatted = "";
function timestamp(): string {
  const now = Date.now();
  if (now !== formattedAt) {
    formattedAt = now;
    formatted = new Date(now).toISOString();
  }
  return formatted;
}

export function createLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const log = (level: LogLevel, msg: string, fields: LogFields | undefined) => {
    const line: Record<string, unknown> = { time: timestamp(), level, msg };
    for (const name in fields) {
      if (!Object.hasOwn(fields, name) || RESERVED.has(name)) continue;
      const value = fields[name];
      // Most fields are strings and numbers: no copy, and no cycle guard to allocate.
      line[name] = isSensitiveTopLevel(name)
        ? REDACTED
        : typeof value === "string" || typeof value === "number" || typeof value === "boolean"
          ? value
          : loggable(value, new WeakSet());
    }
    // A log call never throws into the code that logs: a value JSON cannot hold is already made
    // loggable above, so this only guards against exotic getters.
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch (error) {
      text = JSON.stringify({ time: line.time, level, msg, logError: String(error) });
    }
    write(`${text}\n`);
  };
  return {
    info: (msg, fields) => log("info", msg, fields),
    warn: (msg, fields) => log("warn", msg, fields),
    error: (msg, fields) => log("error", msg, fields),
  };
}

/**
 * A JSON-safe copy of a value with sensitive fields redacted at every depth. `ancestors` holds the
 * objects being copied above this one: a cycle becomes "[circular]", a shared object is copied twice.
 */
function loggable(value: unknown, ancestors: WeakSet<object>): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  if (value === null || typeof value !== "object") return value;
  if (ancestors.has(value)) return "[circular]";
  ancestors.add(value);
  try {
    return copyObject(value, ancestors);
  } finally {
    ancestors.delete(value);
  }
}

/**
 * A failed query's message quotes the statement and then its bound parameters (drizzle writes
 * `Failed query: …\nparams: …`), and the stack starts with the message. Parameters are user data:
 * environment values, secrets' hashes, e-mail addresses. The log keeps the statement and the
 * frames, and drops the parameters.
 */
function withoutBoundParameters(error: Error): { message: string; stack: string | undefined } {
  const cut = error.message.indexOf("\nparams: ");
  if (cut === -1) return { message: error.message, stack: error.stack };
  const message = error.message.slice(0, cut);
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return { message, stack: [`${error.name}: ${message}`, ...frames].join("\n") };
}

function copyObject(value: object, seen: WeakSet<object>): unknown {
  if (value instanceof Error) {
    // JSON.stringify(error) is `{}`; keep what explains it. A message can quote input, not headers.
    const cause = value.cause === undefined ? {} : { cause: loggable(value.cause, seen) };
    return { name: value.name, ...withoutBoundParameters(value), ...cause };
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => loggable(item, seen));
  if (value instanceof Map) return loggable(Object.fromEntries(value), seen);
  if (value instanceof Headers) return loggable(Object.fromEntries(value.entries()), seen);
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value))
    copy[name] = isSensitiveFieldName(name) ? REDACTED : loggable(item, seen);
  return copy;
}
