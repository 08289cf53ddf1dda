import { celEnv, celList, isCelList, isCelMap } from "@bufbuild/cel";
import type { CelEnv, CelResult, CelValue } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { chargeActive } from "./cost-meter.js";

/**
 * The CEL environment scripts are evaluated in: the standard library plus the strings extension,
 * where every function call charges the running evaluation's meter (cost-meter.ts) for the size
 * of what it reads and returns, and three internal functions that cost-instrumentation.ts puts
 * into comprehensions. Their names start with `@`, which no expression can write.
 */

/** The environment expressions are checked against: which functions exist. */
export const BASE_ENV = celEnv({ funcs: strings });

/** Charges one iteration of a comprehension: `@iteration(loopCondition, weight)` returns the condition. */
export const ITERATION = "@iteration";
/** A fresh list owned by one run of a `map` or `filter` (their accumulator). */
export const ACCUMULATOR = "@accumulator";
/** Appends to that accumulator in place; `accu + [x]` would copy or nest the list at each step. */
export const APPEND = "@append";

type FuncGroup = NonNullable<ReturnType<CelEnv["funcs"]["find"]>>;

/**
 * Characters (or bytes) per cost unit, cel-go's traversal cost factor of 0.1. An element of a
 * list or map costs a unit of its own: it is a value to compare, convert or allocate, which
 * costs about what evaluating a node does.
 */
const CHARACTERS_PER_UNIT = 10;

/**
 * What a call will traverse or build beyond its arguments' sizes, for the functions whose work
 * can be far larger than what they read: charged before they run, so that the call is refused
 * instead of holding the event loop. @bufbuild/cel's `replace` rescans the growing result after
 * each replacement, `join` and `format` build text from every element, and `matches` runs a
 * regular expression whose work grows with the pattern (cel-go charges it the same way).
 */
const UP_FRONT: Readonly<Record<string, (target: CelValue | undefined, args: readonly CelValue[]) => number>> = {
  replace: (target, args) => {
    const [text, old, replacement, limit] = [target, ...args];
    if (typeof text !== "string" || typeof old !== "string" || typeof replacement !== "string") return 0;
    const max = typeof limit === "bigint" ? Math.max(0, Number(limit)) : text.length;
    const count = old === "" ? max : Math.min(max, occurrences(text, old, max));
    return count * (text.length + count * Math.max(0, replacement.length - old.length));
  },
  join: (target, args) => (isCelList(target) ? textLength(target) + target.size * textLength([args[0] ?? ""]) : 0),
  format: (_target, args) => (isCelList(args[0]) ? textLength(args[0]) : 0),
  matches: (target, args) => textLength([target ?? ""]) * Math.max(1, textLength([args[0] ?? ""]) / 4),
};

/** Functions that read only the length of a list or map, or look one key up. */
function readsWholeContainer(name: string, args: readonly CelValue[]): boolean {
  if (name === "size") return false;
  if (name === "@in") return !isCelMap(args[1]);
  return true;
}

function meteredGroup(group: FuncGroup): FuncGroup {
  const upFront = UP_FRONT[group.name];
  return {
    name: group.name,
    [Symbol.iterator]: () => group[Symbol.iterator](),
    call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined {
      const whole = readsWholeContainer(group.name, args);
      let read = costOf(target, whole);
      for (const arg of args) read += costOf(arg, whole);
      if (upFront !== undefined) read += upFront(target, args) / CHARACTERS_PER_UNIT;
      if (read > 0) chargeActive(read);
      const result = group.call(id, target, args);
      const built = costOf(result, true);
      if (built > 0) chargeActive(built);
      return result;
    },
  };
}

/** What reading or building `value` costs: its characters or bytes, or its elements. */
function costOf(value: CelValue | CelResult | undefined, wholeContainer: boolean): number {
  if (typeof value === "string" || value instanceof Uint8Array) return value.length / CHARACTERS_PER_UNIT;
  if (isCelList(value) || isCelMap(value)) return wholeContainer ? value.size : 0;
  return 0;
}

const accumulators = new WeakMap<object, CelValue[]>();

function internalGroup(name: string, call: (args: CelValue[]) => CelResult): FuncGroup {
  return { name, [Symbol.iterator]: () => [][Symbol.iterator](), call: (_id, _target, args) => call(args) };
}

const INTERNAL = new Map<string, FuncGroup>([
  [
    ITERATION,
    internalGroup(ITERATION, ([condition, weight]) => {
      chargeActive(Number(weight));
      return condition as CelValue;
    }),
  ],
  [
    ACCUMULATOR,
    internalGroup(ACCUMULATOR, () => {
      const items: CelValue[] = [];
      const list = celList(items);
      accumulators.set(list, items);
      return list;
    }),
  ],
  [
    APPEND,
    internalGroup(APPEND, ([list, item]) => {
      // Only the accumulator of the running comprehension reaches here: no expression can name it.
      accumulators.get(list as object)?.push(item as CelValue);
      return list as CelValue;
    }),
  ],
]);

const metered = new Map<string, FuncGroup>();
for (const func of BASE_ENV.funcs) {
  const group = BASE_ENV.funcs.find(func.name);
  if (group !== undefined && !metered.has(func.name)) metered.set(func.name, meteredGroup(group));
}

/**
 * BASE_ENV with the metered function groups. CelEnv's function resolver cannot be implemented
 * outside the library (a private brand), but the planner only ever calls its `find`: the
 * environment is BASE_ENV with `funcs` shadowed.
 */
export const METERED_ENV: CelEnv = Object.create(BASE_ENV, {
  funcs: { value: { find: (name: string) => INTERNAL.get(name) ?? metered.get(name) } },
}) as CelEnv;

/** Total length of the strings and bytes among `values` (what `join` concatenates). */
function textLength(values: Iterable<CelValue>): number {
  let total = 0;
  for (const value of values) if (typeof value === "string" || value instanceof Uint8Array) total += value.length;
  return total;
}

/** Occurrences of `part` in `text`, counted up to `max`. */
function occurrences(text: string, part: string, max: number): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1 && count < max; at = text.indexOf(part, at + part.length)) count++;
  return count;
}
