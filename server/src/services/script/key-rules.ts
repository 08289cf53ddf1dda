import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Input rules of the environment-variable methods, as the contract's comments fix them
 * (proto/platform/script/v1/script_service.proto): keys follow the POSIX portable
 * environment-name rule, 1 to 256 letters, digits or `_`, not starting with a digit; values are at
 * most 64 KiB of UTF-8. Every failure is INVALID_ARGUMENT naming the field, and, for map and list
 * entries, the entry (`vars["1abc"]`, `set["x y"]`, `delete[0]`).
 */

export const MAX_KEY_LENGTH = 256;
export const MAX_VALUE_BYTES = 64 * 1024;

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEY_RULE = `1 to ${MAX_KEY_LENGTH} letters, digits or "_", not starting with a digit`;

/** Whether a value may be empty: tenant values are REQUIRED, overlay values may be empty on purpose. */
export type EmptyValue = "required" | "allowed";

/** Checks a key given in a scalar field (`key`) or as a list entry (`delete[0]`). */
export function checkKey(field: string, key: string): void {
  if (key === "") throw invalid(`${field} is required`);
  if (!isValidKey(key)) throw invalid(`${field}: ${quote(key)} is not a valid variable name (${KEY_RULE})`);
}

/** Checks a key given as a map key: the field already names it (`vars["1abc"]`). */
export function checkMapKey(field: string, key: string): void {
  if (!isValidKey(key)) throw invalid(`${entryField(field, key)} is not a valid variable name (${KEY_RULE})`);
}

export function isValidKey(key: string): boolean {
  return key.length >= 1 && key.length <= MAX_KEY_LENGTH && KEY_PATTERN.test(key);
}

/**
 * Checks a value. Beyond the contract's size limit, a NUL character is refused: no process
 * environment can hold one (it ends a C string), and PostgreSQL text cannot store it either.
 */
export function checkValue(field: string, value: string, empty: EmptyValue): void {
  if (value === "" && empty === "required") throw invalid(`${field} is required`);
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_VALUE_BYTES)
    throw invalid(`${field} is ${bytes} bytes of UTF-8, more than the limit of 64 KiB (${MAX_VALUE_BYTES})`);
  if (value.includes("\0"))
    throw invalid(`${field} contains a NUL character, which an environment variable cannot hold`);
}

/** Checks every entry of a key-to-value map field (`vars`, `set`), keys first. */
export function checkEntries(field: string, entries: Readonly<Record<string, string>>, empty: EmptyValue): void {
  for (const [key, value] of Object.entries(entries)) {
    checkMapKey(field, key);
    checkValue(entryField(field, key), value, empty);
  }
}

/**
 * Checks the `delete` list of an overlay update: each key follows the key rule, and a key that is
 * also in `set` is refused, since "set and delete" has no single meaning (the contract says so).
 */
export function checkDeletions(deletions: readonly string[], set: Readonly<Record<string, string>>): void {
  deletions.forEach((key, index) => {
    const field = `delete[${index}]`;
    checkKey(field, key);
    if (Object.hasOwn(set, key))
      throw invalid(`${field}: ${quote(key)} is also in set; a key cannot be both set and deleted`);
  });
}

/**
 * Checks a script name. The contract asks only that it be given: the script registry, which does not
 * exist yet in this build, will own the naming rule, and a name it never accepted simply has no
 * overlay.
 */
/** Script names: letters, digits, `-`, `_` and `.`, 1 to 128 characters, as the contract says. */
export function checkScriptName(field: string, name: string): void {
  if (name === "") throw invalid(`${field} is required`);
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name)) {
    throw invalid(
      `${field}: ${quote(name)} is not a script name (letters, digits, "-", "_" and ".", 1 to 128 characters)`,
    );
  }
}

/** `vars["KEY"]`: the field path of one map entry, with the key quoted as JSON. */
export function entryField(field: string, key: string): string {
  return `${field}[${quote(key)}]`;
}

/** A key quoted for an error message, cut short so a huge bogus key cannot flood the message. */
function quote(key: string): string {
  const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
  return JSON.stringify(shown);
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
