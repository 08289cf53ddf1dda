import { randomBytes } from "node:crypto";
import { link, mkdir, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SECRET_KEY_BYTES } from "./secret-box.js";

export interface SecretKeyOptions {
  /** Base64 of 32 bytes, from PLATFORM_SECRET_KEY. When given, it wins over the data directory. */
  readonly secretKey?: string | undefined;
  /** The server's data directory; `memory://` (tests) gets a key that lives as long as the process. */
  readonly dataDir: string;
  /** Told when a new key file is written; never given the key. */
  readonly report?: (line: string) => void;
}

export const SECRET_KEY_FILE = "secret.key";
const OWNER_ONLY_MODES = new Set([0o600, 0o400]);

/**
 * The key that seals secret values at rest. Configuration wins; otherwise the embedded default
 * keeps one in `<dataDir>/secret.key`, generated on first start. Errors describe what is wrong with
 * a key and never contain it.
 */
export async function loadSecretKey(options: SecretKeyOptions): Promise<Uint8Array> {
  if (options.secretKey !== undefined) return decodeKey(options.secretKey, "PLATFORM_SECRET_KEY");
  if (options.dataDir === "memory://") return new Uint8Array(randomBytes(SECRET_KEY_BYTES));
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const path = join(options.dataDir, SECRET_KEY_FILE);
  const existing = await readKeyFile(path);
  if (existing) return existing;
  if (await writeKeyFileOnce(path)) {
    options.report?.(`generated the secret key ${path}: back it up, secrets stored under it cannot be read without it`);
  }
  // Read back rather than trusting what was written: another process may have won the race.
  const written = await readKeyFile(path);
  if (!written) throw new Error(`${path} vanished right after it was written`);
  return written;
}

/** The key in the file, or undefined when there is no file yet. */
async function readKeyFile(path: string): Promise<Uint8Array | undefined> {
  let file;
  try {
    file = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    // Mode bits mean nothing on Windows, where access is governed by ACLs instead.
    const mode = (await file.stat()).mode & 0o777;
    if (process.platform !== "win32" && !OWNER_ONLY_MODES.has(mode)) {
      throw new Error(
        `${path} may be read by other users (mode ${mode.toString(8).padStart(4, "0")}): ` +
          `the secret key must be readable by its owner only; run \`chmod 600 ${path}\``,
      );
    }
    return decodeKey(await file.readFile("utf8"), path);
  } finally {
    await file.close();
  }
}

/**
 * Writes a new random key without ever overwriting an existing file: the key goes to a private
 * temporary file first, which is then hard-linked into place, an atomic step that fails when the
 * name exists. A crash therefore never leaves a half-written key, and two starts racing on the
 * same directory end up with one key. Answers whether this call created the file.
 */
async function writeKeyFileOnce(path: string): Promise<boolean> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const file = await open(temporary, "wx", 0o600);
  try {
    // The umask may have taken bits from the mode asked for at creation; set it exactly.
    await file.chmod(0o600);
    await file.writeFile(`${randomBytes(SECRET_KEY_BYTES).toString("base64")}\n`, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** Base64 (standard or URL-safe, padding optional) of exactly 32 bytes, else an error naming `source`. */
function decodeKey(text: string, source: string): Uint8Array {
  const encoded = text.trim();
  const advice = `must be the base64 encoding of exactly ${SECRET_KEY_BYTES} random bytes (make one with \`openssl rand -base64 ${SECRET_KEY_BYTES}\`)`;
  // Buffer's decoder skips characters outside the alphabet, so a typo would silently give another key.
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(encoded)) throw new Error(`${source} is not base64: it ${advice}`);
  const key = Buffer.from(encoded, "base64");
  if (key.byteLength !== SECRET_KEY_BYTES) throw new Error(`${source} holds ${key.byteLength} bytes: it ${advice}`);
  return new Uint8Array(key);
}
