import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2 from "ssh2";
import { describe, expect, it } from "vitest";
import { generateEd25519KeyPair } from "./ssh/ssh-host-key.js";
import { parseAuthorizedKey, SshKeyInputError } from "./ssh-keys.js";

describe("parseAuthorizedKey", () => {
  it("reads ed25519, ecdsa and rsa keys with the fingerprint ssh-keygen prints", () => {
    const dir = mkdtempSync(join(tmpdir(), "ssh-keys-"));
    for (const [type, options] of [
      ["ed25519", undefined],
      ["ecdsa", { bits: 256 }],
      ["rsa", { bits: 2048 }],
    ] as const) {
      const pair =
        type === "ed25519" ? generateEd25519KeyPair() : ssh2.utils.generateKeyPairSync(type, options as never);
      const line = `${pair.public.trim()} someone@laptop`;
      writeFileSync(join(dir, `${type}.pub`), `${line}\n`);
      const printed = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", join(dir, `${type}.pub`)], {
        encoding: "utf8",
      });
      const parsed = parseAuthorizedKey(line);
      expect(printed.split(" ")[1]).toBe(parsed.fingerprint);
      expect(parsed.normalized).toBe(pair.public.trim().split(" ").slice(0, 2).join(" "));
    }
  });

  it("refuses what is not a key, naming public_key", () => {
    const ed = generateEd25519KeyPair().public.split(" ")[1]!;
    for (const bad of [
      undefined,
      "",
      "ssh-ed25519",
      `ssh-dss ${ed}`,
      `command="rm -rf /" ssh-ed25519 ${ed}`,
      "ssh-ed25519 not*base64",
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==",
      `ssh-rsa ${ed}`,
      `ssh-ed25519 ${"A".repeat(20_000)}`,
    ]) {
      expect(() => parseAuthorizedKey(bad), String(bad).slice(0, 40)).toThrow(SshKeyInputError);
      expect(() => parseAuthorizedKey(bad)).toThrow(/public_key/);
    }
  });
});
