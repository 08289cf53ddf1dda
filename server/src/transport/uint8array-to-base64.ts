/**
 * `Uint8Array.prototype.toBase64` (the TC39 base64 proposal) backed by Buffer, for runtimes that
 * lack it (Node 20 and 22).
 *
 * Why: protobuf-es writes every `bytes` field of a JSON message (Connect JSON, the HTTP routes,
 * server-sent events) with the native method when it exists and otherwise with a loop that grows
 * a string one character at a time. On Node 20 that costs about 0.4 s and hundreds of megabytes of
 * garbage per 2 MiB chunk, during which the event loop serves nothing else: streaming a 40 MB
 * thread result stalled the whole server for seconds. Buffer's encoder does the same in
 * milliseconds. protobuf-es looks the method up once, when it loads, so the binary installs this
 * before importing anything else.
 */

export interface ToBase64Options {
  alphabet?: "base64" | "base64url";
  omitPadding?: boolean;
}

declare global {
  interface Uint8Array {
    toBase64?(options?: ToBase64Options): string;
  }
}

/** The proposal's `toBase64`, for `this` a Uint8Array. */
export function uint8ArrayToBase64(this: Uint8Array, options: ToBase64Options = {}): string {
  if (!(this instanceof Uint8Array)) throw new TypeError("toBase64 called on a value that is not a Uint8Array");
  const alphabet = options.alphabet ?? "base64";
  if (alphabet !== "base64" && alphabet !== "base64url")
    throw new TypeError(`toBase64: alphabet must be "base64" or "base64url", got ${JSON.stringify(alphabet)}`);
  const bytes = Buffer.from(this.buffer, this.byteOffset, this.byteLength);
  // Buffer pads "base64" and never pads "base64url"; the proposal pads both unless told not to.
  const text = bytes.toString(alphabet);
  if (options.omitPadding) return alphabet === "base64" ? text.replace(/=+$/, "") : text;
  return alphabet === "base64url" ? text.padEnd(Math.ceil(text.length / 4) * 4, "=") : text;
}

/** Installs `uint8ArrayToBase64` unless the runtime has its own; true when it was installed. */
export function installUint8ArrayToBase64(): boolean {
  if (typeof Uint8Array.prototype.toBase64 === "function") return false;
  Object.defineProperty(Uint8Array.prototype, "toBase64", {
    value: uint8ArrayToBase64,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return true;
}
