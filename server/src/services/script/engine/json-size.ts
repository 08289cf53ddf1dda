import type { JsonValue } from "../dsl/script-document.js";

/**
 * The length of `value`'s JSON text, counted without writing it (strings by their length, so
 * characters beyond ASCII count once, and numbers as 8), and stopping once it passes `atMost`:
 * a budget check needs only to know that a value does not fit, and should not walk all of a
 * large one to learn it.
 */
export function jsonSize(value: JsonValue, atMost: number): number {
  let total = 0;
  const stack: JsonValue[] = [value];
  while (stack.length > 0 && total <= atMost) {
    const item = stack.pop() as JsonValue;
    if (item === null || typeof item === "boolean") total += 5;
    else if (typeof item === "number") total += 8;
    else if (typeof item === "string") total += item.length + 2;
    else if (Array.isArray(item)) {
      total += 2 + item.length;
      if (total <= atMost) for (const element of item) stack.push(element);
    } else {
      const keys = Object.keys(item);
      total += 2 + keys.length;
      for (const key of keys) {
        if (total > atMost) break;
        total += key.length + 3;
        stack.push(item[key] as JsonValue);
      }
    }
  }
  return total;
}
