import { base64Encode } from "@bufbuild/protobuf/wire";
import { afterEach, describe, expect, it } from "vitest";
import { installUint8ArrayToBase64, uint8ArrayToBase64 } from "./uint8array-to-base64.js";

// protobuf-es's own encoder (its fallback loop on this runtime) is the reference.
const encodings = [
  { options: {}, reference: "std" },
  { options: { alphabet: "base64" }, reference: "std" },
  { options: { omitPadding: true }, reference: "std_raw" },
  { options: { alphabet: "base64url", omitPadding: true }, reference: "url" },
] as const;

describe("uint8ArrayToBase64", () => {
  it("encodes like protobuf-es for every length modulo 3 and every byte value", () => {
    const all = Uint8Array.from({ length: 256 * 3 + 2 }, (_, i) => (i * 151) & 255);
    for (let length = 0; length <= 7; length++) {
      for (const bytes of [all.subarray(0, length), all.subarray(all.length - length), all]) {
        for (const { options, reference } of encodings)
          expect(uint8ArrayToBase64.call(bytes, options)).toBe(base64Encode(bytes, reference));
      }
    }
  });

  it("reads only the view, not the rest of its buffer", () => {
    const buffer = new Uint8Array([0xff, 0xfb, 0xef, 0x01, 0xff]);
    expect(uint8ArrayToBase64.call(buffer.subarray(1, 4))).toBe("++8B");
    expect(uint8ArrayToBase64.call(buffer.subarray(1, 4), { alphabet: "base64url" })).toBe("--8B");
  });

  it("pads base64url unless padding is omitted, as the proposal says", () => {
    const bytes = new Uint8Array([0xfb, 0xff]);
    expect(uint8ArrayToBase64.call(bytes, { alphabet: "base64url" })).toBe("-_8=");
    expect(uint8ArrayToBase64.call(bytes, { alphabet: "base64url", omitPadding: true })).toBe("-_8");
    expect(uint8ArrayToBase64.call(bytes, { omitPadding: true })).toBe("+/8");
  });

  it("refuses an unknown alphabet and a receiver that is not a Uint8Array", () => {
    expect(() => uint8ArrayToBase64.call(new Uint8Array(1), { alphabet: "hex" as never })).toThrow(
      /alphabet must be "base64" or "base64url", got "hex"/,
    );
    expect(() => uint8ArrayToBase64.call([1, 2] as never)).toThrow(TypeError);
  });
});

describe("installUint8ArrayToBase64", () => {
  const original = Object.getOwnPropertyDescriptor(Uint8Array.prototype, "toBase64");
  afterEach(() => {
    if (original) Object.defineProperty(Uint8Array.prototype, "toBase64", original);
    else delete (Uint8Array.prototype as { toBase64?: unknown }).toBase64;
  });

  it("installs the method where it is missing, as a non-enumerable property", () => {
    delete (Uint8Array.prototype as { toBase64?: unknown }).toBase64;
    expect(installUint8ArrayToBase64()).toBe(true);
    expect(new Uint8Array([104, 105]).toBase64?.()).toBe("aGk=");
    expect(Buffer.from("hi").toBase64?.()).toBe("aGk=");
    expect(Object.keys(Uint8Array.prototype)).not.toContain("toBase64");
  });

  it("keeps a runtime's own method", () => {
    const native = () => "native";
    Object.defineProperty(Uint8Array.prototype, "toBase64", { value: native, writable: true, configurable: true });
    expect(installUint8ArrayToBase64()).toBe(false);
    expect(Uint8Array.prototype.toBase64).toBe(native);
  });
});
