import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSecretKey } from "./secret-key.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "secret-key-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe("loadSecretKey", () => {
  it("generates a key on first start in a new data directory, owner-only, and reuses it", async () => {
    const dataDir = join(root, "data", "nested");
    const reports: string[] = [];
    const key = await loadSecretKey({ dataDir, report: (line) => reports.push(line) });
    expect(key.byteLength).toBe(32);
    const path = join(dataDir, "secret.key");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(path, "utf8")).trim(), "base64")).toEqual(Buffer.from(key));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain(path);
    expect(reports[0]).not.toContain(Buffer.from(key).toString("base64"));

    const again = await loadSecretKey({ dataDir, report: (line) => reports.push(line) });
    expect(again).toEqual(key);
    expect(reports).toHaveLength(1);
    expect(await readdir(dataDir)).toEqual(["secret.key"]);
  });

  it("ends up with one key when starts race on the same directory", async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadSecretKey({ dataDir: root })));
    for (const key of keys) expect(key).toEqual(keys[0]);
    expect(await readdir(root)).toEqual(["secret.key"]);
  });

  it("prefers the configured key and writes no file", async () => {
    const configured = randomBytes(32);
    const key = await loadSecretKey({ secretKey: configured.toString("base64"), dataDir: root });
    expect(Buffer.from(key)).toEqual(configured);
    expect(await readdir(root)).toEqual([]);
    const urlSafe = await loadSecretKey({ secretKey: configured.toString("base64url"), dataDir: root });
    expect(Buffer.from(urlSafe)).toEqual(configured);
  });

  it("rejects a configured key that is not 32 bytes of base64, without echoing it", async () => {
    const short = randomBytes(16).toString("base64");
    await expect(loadSecretKey({ secretKey: short, dataDir: root })).rejects.toThrow(
      /PLATFORM_SECRET_KEY holds 16 bytes.*exactly 32/,
    );
    await expect(loadSecretKey({ secretKey: short, dataDir: root })).rejects.not.toThrow(short);
    const notBase64 = "this is not base64 at all, it is a passphrase!";
    await expect(loadSecretKey({ secretKey: notBase64, dataDir: root })).rejects.toThrow(
      /PLATFORM_SECRET_KEY is not base64/,
    );
    await expect(loadSecretKey({ secretKey: notBase64, dataDir: root })).rejects.not.toThrow("passphrase");
    await expect(loadSecretKey({ secretKey: "", dataDir: root })).rejects.toThrow(/holds 0 bytes/);
  });

  it("refuses a key file that group or others may read, naming the chmod that fixes it", async () => {
    await loadSecretKey({ dataDir: root });
    const path = join(root, "secret.key");
    await chmod(path, 0o644);
    await expect(loadSecretKey({ dataDir: root })).rejects.toThrow(`mode 0644`);
    await expect(loadSecretKey({ dataDir: root })).rejects.toThrow(`chmod 600 ${path}`);
    await chmod(path, 0o400);
    expect((await loadSecretKey({ dataDir: root })).byteLength).toBe(32);
  });

  it("refuses a damaged key file instead of replacing it", async () => {
    const path = join(root, "secret.key");
    await writeFile(path, "c2hvcnQ=\n", { mode: 0o600 });
    await expect(loadSecretKey({ dataDir: root })).rejects.toThrow(`${path} holds 5 bytes`);
    expect(await readFile(path, "utf8")).toBe("c2hvcnQ=\n");
  });

  it("keeps an in-memory key for an in-memory data directory", async () => {
    const key = await loadSecretKey({ dataDir: "memory://" });
    expect(key.byteLength).toBe(32);
  });
});
