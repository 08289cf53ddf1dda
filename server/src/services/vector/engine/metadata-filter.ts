import { Code, ConnectError } from "@connectrpc/connect";
import { FilterOp, LogicalOp } from "../../../../../gen/platform/data/vector/v1/search_pb.js";
import type { SqlParam } from "./sql-executor.js";

export { FilterOp, LogicalOp };

/** The fields of search.proto's MetadataFilter the engine reads (the generated message fits). */
export interface FilterCondition {
  readonly field: string;
  readonly op: FilterOp;
  readonly value: string;
}

/** The fields of search.proto's FilterGroup the engine reads (the generated message fits). */
export interface FilterGroupInput {
  readonly op?: LogicalOp;
  readonly filters?: readonly FilterCondition[];
  readonly groups?: readonly FilterGroupInput[];
}

/** Metadata keys are identifiers of the caller's own choosing; anything else is a mistake worth naming. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
/** Text PostgreSQL's numeric accepts, so a string field holding a number compares as one. */
const NUMERIC_TEXT = String.raw`^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$`;
const MAX_DEPTH = 8;
const MAX_CONDITIONS = 256;

/**
 * Compiles a FilterGroup into a parameterised boolean SQL expression over the `metadata` jsonb
 * column. `params` receives the bound values (the expression refers to them as `$n`), so neither
 * field names nor values ever become SQL text.
 *
 * Semantics, for every op: a record whose metadata lacks the field (or holds JSON null there) does
 * not match, NEQ included. Comparisons are numeric when the value and the stored value are both
 * numbers (a JSON number, or a string holding one: `"10" > "9"`), else string comparisons in
 * byte order (collation "C", so ISO timestamps and identifiers order as written). IN takes a
 * comma-separated list; CONTAINS is a substring test on string values; EXISTS ignores the value.
 * An empty group matches everything. Bad input is INVALID_ARGUMENT naming the field by its path.
 */
export function compileFilter(group: FilterGroupInput | undefined, params: SqlParam[], path = "preFilter"): string {
  if (group === undefined) return "true";
  const budget = { conditions: 0 };
  return compileGroup(group, params, path, 0, budget);
}

function compileGroup(
  group: FilterGroupInput,
  params: SqlParam[],
  path: string,
  depth: number,
  budget: { conditions: number },
): string {
  if (depth >= MAX_DEPTH) throw invalid(`${path}: filter groups nest at most ${MAX_DEPTH} deep`);
  const op = group.op ?? LogicalOp.UNSPECIFIED;
  if (op !== LogicalOp.UNSPECIFIED && op !== LogicalOp.AND && op !== LogicalOp.OR)
    throw invalid(`${path}.op: unknown logical operator ${String(op)}`);
  const parts: string[] = [];
  for (const [index, condition] of (group.filters ?? []).entries()) {
    if (++budget.conditions > MAX_CONDITIONS)
      throw invalid(`${path}: a filter has at most ${MAX_CONDITIONS} conditions`);
    parts.push(compileCondition(condition, params, `${path}.filters[${index}]`));
  }
  for (const [index, nested] of (group.groups ?? []).entries())
    parts.push(compileGroup(nested, params, `${path}.groups[${index}]`, depth + 1, budget));
  if (parts.length === 0) return "true";
  return `(${parts.join(op === LogicalOp.OR ? " OR " : " AND ")})`;
}

function compileCondition(condition: FilterCondition, params: SqlParam[], path: string): string {
  const field = condition.field;
  if (typeof field !== "string" || !FIELD_NAME.test(field))
    throw invalid(
      `${path}.field: ${JSON.stringify(field)} is not a metadata field name (letters, digits, _ . : -, starting with a letter or _)`,
    );
  const bind = (value: SqlParam) => {
    params.push(value);
    return `$${params.length}`;
  };
  const key = bind(field);
  const text = `(metadata->>${key})`;
  const value = condition.value ?? "";
  const numeric = numberText(value);
  const isNumberText = `${text} ~ '${NUMERIC_TEXT}'`;
  const equal = () => {
    const v = bind(value);
    if (numeric === undefined) return `${text} = ${v}`;
    return `(CASE WHEN ${isNumberText} THEN ${text}::numeric = ${bind(numeric)}::numeric ELSE ${text} = ${v} END)`;
  };
  const compare = (operator: string) => {
    const v = bind(value);
    const asText = `(jsonb_typeof(metadata->${key}) = 'string' AND ${text} COLLATE "C" ${operator} ${v} COLLATE "C")`;
    if (numeric === undefined) return asText;
    return `(CASE WHEN ${isNumberText} THEN ${text}::numeric ${operator} ${bind(numeric)}::numeric ELSE ${asText} END)`;
  };
  switch (condition.op) {
    case FilterOp.EQ:
      return equal();
    case FilterOp.NEQ:
      return `(${text} IS NOT NULL AND NOT ${equal()})`;
    case FilterOp.GT:
      return compare(">");
    case FilterOp.GTE:
      return compare(">=");
    case FilterOp.LT:
      return compare("<");
    case FilterOp.LTE:
      return compare("<=");
    case FilterOp.IN: {
      const members = value
        .split(",")
        .map((member) => member.trim())
        .filter((member) => member !== "");
      if (members.length === 0) throw invalid(`${path}.value: FILTER_OP_IN needs a comma-separated list of values`);
      const numbers = members.map(numberText).filter((n): n is string => n !== undefined);
      const asText = `${text} = ANY(${bind(members)}::text[])`;
      if (numbers.length === 0) return asText;
      return `(CASE WHEN ${isNumberText} THEN ${text}::numeric = ANY(${bind(numbers)}::numeric[]) ELSE ${asText} END)`;
    }
    case FilterOp.CONTAINS:
      return `(jsonb_typeof(metadata->${key}) = 'string' AND strpos(${text}, ${bind(value)}) > 0)`;
    case FilterOp.EXISTS:
      return `(${text} IS NOT NULL)`;
    default:
      throw invalid(`${path}.op: must be one of FILTER_OP_EQ … FILTER_OP_EXISTS, got ${String(condition.op)}`);
  }
}

/** The value as numeric text when it is a finite number, else undefined. */
function numberText(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === "" || !new RegExp(NUMERIC_TEXT).test(trimmed)) return undefined;
  return Number.isFinite(Number(trimmed)) ? trimmed : undefined;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
