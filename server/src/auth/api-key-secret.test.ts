import { expect, it } from "vitest";
import {
  displayPrefix,
  generateApiKeySecret,
  hashApiKeySecret,
  isApiKeySecretShape,
  issueSecret,
} from "./api-key-secret.js";

it("generates dk_ followed by 32 random bytes in base64url", () => {
  const secret = generateApiKeySecret();
  expect(secret).toMatch(/^dk_[A-Za-z0-9_-]{43}$/);
  expect(Buffer.from(secret.slice(3), "base64url")).toHaveLength(32);
  expect(new Set(Array.from({ length: 100 }, generateApiKeySecret)).size).toBe(100);
});

it("hashes with SHA-256 to lower-case hex", () => {
  expect(hashApiKeySecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

it("shows the first 10 characters as the display prefix", () => {
  const issued = issueSecret();
  expect(issued.prefix).toBe(issued.secret.slice(0, 10));
  expect(issued.hash).toBe(hashApiKeySecret(issued.secret));
  expect(displayPrefix("dk_ABCDEFGHIJ")).toBe("dk_ABCDEFG");
});

it("recognises the shape of a secret", () => {
  expect(isApiKeySecretShape(generateApiKeySecret())).toBe(true);
  expect(isApiKeySecretShape("dk_short")).toBe(false);
  expect(isApiKeySecretShape(`sk_${"a".repeat(43)}`)).toBe(false);
  expect(isApiKeySecretShape(`dk_${"a".repeat(42)}+`)).toBe(false);
});
