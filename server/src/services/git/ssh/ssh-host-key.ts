import { createHash } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ssh2 from "ssh2";

const HOST_KEY_FILE = "git-ssh-host-key";

export interface SshHostKey {
  /** The private key in OpenSSH form, as the SSH server takes it. */
  readonly privateKey: string;
  /** `SHA256:<base64>` as `ssh-keygen -l` prints it, for operators to publish to users. */
  readonly fingerprint: string;
}

/** The `SHA256:...` fingerprint of an SSH public key blob (the wire form, not the authorized_keys line). */
export function sshKeyFingerprint(publicKeyBlob: Buffer): string {
  return "SHA256:" + createHash("sha256").update(publicKeyBlob).digest("base64").replace(/=+$/, "");
}

/**
 * A new ed25519 key pair in OpenSSH form. ssh2's generator writes the public key without its
 * leading byte when that byte is zero (about one key in 256 is 31 bytes long), and such a key
 * parses nowhere: a server would never start on it. Another pair is generated instead.
 */
export function generateEd25519KeyPair(): { readonly private: string; readonly public: string } {
  for (;;) {
    const pair = ssh2.utils.generateKeyPairSync("ed25519");
    if (!(ssh2.utils.parseKey(pair.private) instanceof Error)) return pair;
  }
}

/**
 * The server's ed25519 host key, made at the first start and reused after, so clients that pinned it
 * in known_hosts keep trusting the server across restarts. The file is written owner-only.
 */
export async function loadOrCreateHostKey(dataDir: string): Promise<SshHostKey> {
  const path = join(dataDir, HOST_KEY_FILE);
  let privateKey: string;
  try {
    privateKey = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    privateKey = generateEd25519KeyPair().private;
    // `wx` so two processes sharing a data directory never overwrite each other's key.
    await writeFile(path, privateKey, { mode: 0o600, flag: "wx" }).catch(async (writeError: unknown) => {
      if ((writeError as NodeJS.ErrnoException).code !== "EEXIST") throw writeError;
      privateKey = await readFile(path, "utf8");
    });
    await chmod(path, 0o600);
  }
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) {
    throw new Error(
      `${path} does not hold an SSH private key: remove it, and a new host key is made at the next start`,
    );
  }
  return { privateKey, fingerprint: sshKeyFingerprint(parsed.getPublicSSH()) };
}
