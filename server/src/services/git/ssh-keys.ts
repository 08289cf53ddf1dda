import { and, asc, eq } from "drizzle-orm";
import ssh2 from "ssh2";
import type { Database } from "../../db/database.js";
import { isUniqueViolation } from "../../db/sql-state.js";
import { gitSshKeys } from "./git-schema.js";
import { sshKeyFingerprint } from "./ssh/ssh-host-key.js";
import type { SshUserKey } from "./ssh/git-ssh-server.js";

/** Key types the SSH listener accepts for user authentication. */
const ACCEPTED_TYPES = new Set([
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "ssh-rsa",
]);
/** An 8192-bit RSA key is about 1.4 KiB in base64: anything far longer is not a key. */
const MAX_PUBLIC_KEY_CHARS = 16 * 1024;
const MAX_NAME_CHARS = 100;

/** Why an uploaded key was refused; the message names the field. */
export class SshKeyInputError extends Error {
  constructor(
    readonly status: 400 | 409,
    message: string,
  ) {
    super(message);
  }
}

export interface ParsedPublicKey {
  readonly type: string;
  readonly fingerprint: string;
  /** `<type> <base64>`: the comment is dropped, it is the uploader's note and not part of the key. */
  readonly normalized: string;
}

/**
 * Reads a public key in authorized_keys form (`<type> <base64> [comment]`, no options) and checks
 * that the base64 really is a key of that type.
 */
export function parseAuthorizedKey(line: unknown): ParsedPublicKey {
  if (typeof line !== "string" || line.trim() === "")
    throw new SshKeyInputError(400, "public_key is required: `<type> <base64> [comment]` as in authorized_keys");
  if (line.length > MAX_PUBLIC_KEY_CHARS)
    throw new SshKeyInputError(400, `public_key is longer than ${MAX_PUBLIC_KEY_CHARS} characters`);
  const [type, body] = line.trim().split(/\s+/);
  if (!type || !ACCEPTED_TYPES.has(type))
    throw new SshKeyInputError(
      400,
      `public_key must start with a key type: one of ${[...ACCEPTED_TYPES].join(", ")} (options before the type are not taken)`,
    );
  if (!body || !/^[A-Za-z0-9+/]+={0,2}$/.test(body))
    throw new SshKeyInputError(400, "public_key has no base64 key after its type");
  const parsed = ssh2.utils.parseKey(`${type} ${body}`);
  if (parsed instanceof Error || Array.isArray(parsed) || parsed.type !== type)
    throw new SshKeyInputError(400, `public_key is not a valid ${type} key`);
  return { type, fingerprint: sshKeyFingerprint(parsed.getPublicSSH()), normalized: `${type} ${body}` };
}

export type SshKeyRow = typeof gitSshKeys.$inferSelect;

export async function addSshKey(
  db: Database,
  owner: { readonly orgId: string; readonly principal: string },
  input: { readonly name: unknown; readonly publicKey: unknown; readonly readOnly: unknown },
): Promise<SshKeyRow> {
  const { name, readOnly } = input;
  if (typeof name !== "string" || name.trim() === "" || name.length > MAX_NAME_CHARS)
    throw new SshKeyInputError(400, `name is required: 1 to ${MAX_NAME_CHARS} characters`);
  if (readOnly !== undefined && typeof readOnly !== "boolean")
    throw new SshKeyInputError(400, "read_only must be true or false");
  const key = parseAuthorizedKey(input.publicKey);
  try {
    const [row] = await db
      .insert(gitSshKeys)
      .values({
        orgId: owner.orgId,
        ownerPrincipal: owner.principal,
        name: name.trim(),
        keyType: key.type,
        fingerprint: key.fingerprint,
        publicKey: key.normalized,
        readOnly: readOnly ?? false,
      })
      .returning();
    return row!;
  } catch (error) {
    // A key identifies its user on the SSH wire, so it can be registered once across the server.
    if (isUniqueViolation(error))
      throw new SshKeyInputError(409, `public_key is already registered (fingerprint ${key.fingerprint})`);
    throw error;
  }
}

export function listSshKeys(db: Database, orgId: string, principal: string): Promise<SshKeyRow[]> {
  return db
    .select()
    .from(gitSshKeys)
    .where(and(eq(gitSshKeys.orgId, orgId), eq(gitSshKeys.ownerPrincipal, principal)))
    .orderBy(asc(gitSshKeys.createdAt), asc(gitSshKeys.id));
}

/** Deletes the caller's own key; false when there is no such key of theirs. */
export async function deleteSshKey(db: Database, orgId: string, principal: string, keyId: string): Promise<boolean> {
  if (!/^[0-9a-f-]{36}$/i.test(keyId)) return false;
  const removed = await db
    .delete(gitSshKeys)
    .where(and(eq(gitSshKeys.id, keyId), eq(gitSshKeys.orgId, orgId), eq(gitSshKeys.ownerPrincipal, principal)))
    .returning({ id: gitSshKeys.id });
  return removed.length > 0;
}

/** The key an SSH client authenticates with, as the SSH listener needs it. */
export async function findSshKeyByFingerprint(db: Database, fingerprint: string): Promise<SshUserKey | undefined> {
  const [row] = await db.select().from(gitSshKeys).where(eq(gitSshKeys.fingerprint, fingerprint));
  return row && { keyId: row.id, orgId: row.orgId, principal: row.ownerPrincipal, readOnly: row.readOnly };
}

export async function touchSshKey(db: Database, keyId: string): Promise<void> {
  await db.update(gitSshKeys).set({ lastUsedAt: Date.now() }).where(eq(gitSshKeys.id, keyId));
}
