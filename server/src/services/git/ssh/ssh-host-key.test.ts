import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2 from "ssh2";
import { describe, expect, it } from "vitest";
import { generateEd25519KeyPair, loadOrCreateHostKey } from "./ssh-host-key.js";

describe("SSH host keys", () => {
  it("generates only keys that parse, with a public key of 32 bytes", () => {
    // One key in 256 has a public key starting with a zero byte: 2000 keys meet one almost surely.
    for (let i = 0; i < 2000; i++) {
      const pair = generateEd25519KeyPair();
      const parsed = ssh2.utils.parseKey(pair.private);
      expect(parsed).not.toBeInstanceOf(Error);
      // The wire form: a 4-byte length, "ssh-ed25519", a 4-byte length and the 32 key bytes.
      expect((parsed as ssh2.ParsedKey).getPublicSSH().length).toBe(4 + 11 + 4 + 32);
    }
  });

  it("makes the key at the first start, owner-only, and keeps it after", async () => {
    const dir = await mkdtemp(join(tmpdir(), "host-key-"));
    try {
      const first = await loadOrCreateHostKey(dir);
      expect(first.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
      expect((await stat(join(dir, "git-ssh-host-key"))).mode & 0o777).toBe(0o600);
      expect(await loadOrCreateHostKey(dir)).toEqual(first);
      await writeFile(join(dir, "git-ssh-host-key"), "not a key");
      await expect(loadOrCreateHostKey(dir)).rejects.toThrow(/remove it/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
