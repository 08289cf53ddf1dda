import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox, SecretBoxError } from "./secret-box.js";

const key = new Uint8Array(randomBytes(32));
const box = createSecretBox(key);
const plaintext = new TextEncoder().encode("ghp_token-that-must-stay-secret");
const aad = "platform.compute.v1.SecretValue/org-a/deploy";

describe("createSecretBox", () => {
  it("opens what it sealed, in the documented layout", () => {
    const sealed = box.seal(plaintext, aad);
    expect(sealed[0]).toBe(1);
    expect(sealed.byteLength).toBe(1 + 12 + plaintext.byteLength + 16);
    expect(Buffer.from(sealed).includes(Buffer.from(plaintext))).toBe(false);
    expect(box.open(sealed, aad)).toEqual(plaintext);
  });

  it("seals an empty value", () => {
    expect(box.open(box.seal(new Uint8Array(), aad), aad)).toEqual(new Uint8Array());
  });

  it("uses a fresh nonce for every value", () => {
    const first = box.seal(plaintext, aad);
    const second = box.seal(plaintext, aad);
    expect(Buffer.from(first.subarray(1, 13)).equals(Buffer.from(second.subarray(1, 13)))).toBe(false);
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false);
  });

  it("refuses a value with any byte altered, without repeating secret material", () => {
    const sealed = box.seal(plaintext, aad);
    for (const index of [0, 1, 13, sealed.byteLength - 1]) {
      const tampered = new Uint8Array(sealed);
      tampered[index]! ^= 0x01;
      expect(() => box.open(tampered, aad)).toThrow(SecretBoxError);
    }
    expect(() => box.open(sealed.subarray(0, 20), aad)).toThrow(/truncated/);
    try {
      box.open(sealed.subarray(0, sealed.byteLength - 1), aad);
      expect.unreachable();
    } catch (error) {
      const message = String((error as Error).message);
      expect(message).not.toContain("ghp_");
      expect(message).not.toContain(Buffer.from(key).toString("base64"));
      expect(message).not.toContain(Buffer.from(key).toString("hex"));
    }
  });

  it("refuses other associated data: a value copied to another slot does not open", () => {
    const sealed = box.seal(plaintext, aad);
    expect(() => box.open(sealed, "platform.compute.v1.SecretValue/org-b/deploy")).toThrow(SecretBoxError);
    expect(() => box.open(sealed, "platform.compute.v1.SecretValue/org-a/other")).toThrow(SecretBoxError);
  });

  it("refuses another key", () => {
    const sealed = box.seal(plaintext, aad);
    expect(() => createSecretBox(new Uint8Array(randomBytes(32))).open(sealed, aad)).toThrow(/does not open/);
  });

  it("keeps its own copy of the key", () => {
    const mutable = new Uint8Array(randomBytes(32));
    const own = createSecretBox(mutable);
    const sealed = own.seal(plaintext, aad);
    mutable.fill(0);
    expect(own.open(sealed, aad)).toEqual(plaintext);
  });

  it("derives a stable 32-byte key per purpose, distinct across purposes and box keys", () => {
    const derived = box.deriveKey("identity-refresh-successor");
    expect(derived).toHaveLength(32);
    expect(box.deriveKey("identity-refresh-successor")).toEqual(derived);
    expect(createSecretBox(key).deriveKey("identity-refresh-successor")).toEqual(derived);
    expect(box.deriveKey("another purpose")).not.toEqual(derived);
    expect(createSecretBox(new Uint8Array(randomBytes(32))).deriveKey("identity-refresh-successor")).not.toEqual(
      derived,
    );
    expect(Buffer.from(derived).equals(Buffer.from(key))).toBe(false);
  });

  it("requires a 32-byte key", () => {
    expect(() => createSecretBox(new Uint8Array(16))).toThrow(/32 bytes, not 16/);
  });
});
