import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { envVars, scriptEnvVars, threads } from "./script-schema.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { OpenedValueMemo } from "./opened-value-memo.js";

/**
 * Environment values are sealed at rest like secrets (people keep credentials in them): AES-256-GCM
 * through the secret box, with associated data naming where the value belongs, so that a sealed
 * value copied to another organization, key or script does not open there.
 */

/** Where a value belongs: a tenant variable, or, with `scriptName`, an entry of that script's overlay. */
export interface EnvSlot {
  readonly orgId: string;
  readonly key: string;
  readonly scriptName?: string;
}

/**
 * The separators cannot occur inside the parts they join (a UUID, a key of letters, digits and
 * `_`, a script name of letters, digits, `.`, `-` and `_`), so no two slots share associated data.
 */
function associatedData({ orgId, key, scriptName }: EnvSlot): string {
  return scriptName === undefined
    ? `platform.script.v1.EnvVar/${orgId}/${key}`
    : `platform.script.v1.ScriptEnv/${orgId}/${scriptName}/${key}`;
}

/** One memo of opened values per secret box: a value opened under one key says nothing under another. */
const memos = new WeakMap<SecretBox, OpenedValueMemo>();

function memoOf(box: SecretBox): OpenedValueMemo {
  let memo = memos.get(box);
  if (memo === undefined) memos.set(box, (memo = new OpenedValueMemo()));
  return memo;
}

export function sealEnvValue(box: SecretBox, slot: EnvSlot, value: string): Uint8Array {
  return box.seal(new TextEncoder().encode(value), associatedData(slot));
}

/**
 * Opens a stored value. Only a sealed value is accepted: a row still holding plaintext was written
 * by a server from before sealing and waits for the next start-up, and is refused rather than read.
 */
export function openEnvValue(box: SecretBox, slot: EnvSlot, sealed: Uint8Array | null): string {
  const name =
    slot.scriptName === undefined
      ? `environment variable ${JSON.stringify(slot.key)}`
      : `${JSON.stringify(slot.key)} of script ${JSON.stringify(slot.scriptName)}'s environment`;
  if (sealed === null)
    throw new ConnectError(`${name} is not sealed yet; restart the server to seal it`, Code.Internal);
  try {
    const aad = associatedData(slot);
    return memoOf(box).open(sealed, aad, () => new TextDecoder().decode(box.open(sealed, aad)));
  } catch {
    throw new ConnectError(
      `${name} cannot be opened with the server's secret key (was PLATFORM_SECRET_KEY or the data directory's secret.key replaced?); set it again to replace its value`,
      Code.Internal,
    );
  }
}

/** Where a thread's merged environment belongs: that thread of that organization. */
export interface ThreadEnvSlot {
  readonly orgId: string;
  readonly threadId: string;
}

const threadAssociatedData = ({ orgId, threadId }: ThreadEnvSlot) =>
  `platform.script.v1.Thread/${orgId}/${threadId}/env`;

/** A thread's environment as its row keeps it: sealed, or null when it has none. */
export function sealThreadEnv(
  box: SecretBox,
  slot: ThreadEnvSlot,
  env: Readonly<Record<string, string>>,
): Uint8Array | null {
  return Object.keys(env).length === 0
    ? null
    : box.seal(new TextEncoder().encode(JSON.stringify(env)), threadAssociatedData(slot));
}

/**
 * The environment a thread's steps see. A value that does not open (another server key, or a row
 * copied from another thread) fails the thread that needs it rather than running it without.
 */
export function openThreadEnv(box: SecretBox, slot: ThreadEnvSlot, sealed: Uint8Array | null): Record<string, string> {
  if (sealed === null) return {};
  try {
    return JSON.parse(new TextDecoder().decode(box.open(sealed, threadAssociatedData(slot)))) as Record<string, string>;
  } catch {
    throw new Error(
      "the thread's environment cannot be opened with the server's secret key (was PLATFORM_SECRET_KEY or the data directory's secret.key replaced?)",
    );
  }
}

/**
 * The one-time step of the upgrade to sealed values, run at every start-up: seals each value still
 * stored in plaintext and clears the plaintext, in one transaction, and does the same for the
 * environments of threads that have not ended (an ended thread's is cleared: nothing reads it
 * again). Idempotent: once every row is sealed it finds nothing. Rows are locked as they are read,
 * so servers starting together seal each row once (the second waits, then finds the plaintext
 * gone). Answers how many values it sealed.
 */
export async function sealPlaintextEnvValues(db: Database, box: SecretBox): Promise<number> {
  const sealed = await sealRows(db, box);
  await sealThreadEnvironments(db, box);
  // An update leaves the old row version, plaintext and all, in the table's files until a vacuum
  // reclaims it; rewriting both tables once removes it now. (Write-ahead log segments from before
  // keep it until the database recycles them.)
  if (sealed > 0) await db.execute(sql`vacuum full env_vars, script_env_vars`);
  return sealed;
}

async function sealThreadEnvironments(db: Database, box: SecretBox): Promise<void> {
  await db.transaction(async (tx) => {
    const plaintext = await tx
      .select({ id: threads.id, orgId: threads.orgId, env: threads.env, status: threads.status })
      .from(threads)
      .where(sql`${threads.env} <> '{}'::jsonb`)
      .for("update");
    for (const { id, orgId, env, status } of plaintext) {
      const ended = status === "completed" || status === "failed" || status === "cancelled";
      await tx
        .update(threads)
        .set({ env: {}, ...(ended ? {} : { sealedEnv: sealThreadEnv(box, { orgId, threadId: id }, env) }) })
        .where(eq(threads.id, id));
    }
  });
}

async function sealRows(db: Database, box: SecretBox): Promise<number> {
  return db.transaction(async (tx) => {
    const tenant = await tx
      .select({ orgId: envVars.orgId, key: envVars.key, value: envVars.plaintextValue })
      .from(envVars)
      .where(isNotNull(envVars.plaintextValue))
      .for("update");
    for (const { orgId, key, value } of tenant) {
      await tx
        .update(envVars)
        .set({ sealedValue: sealEnvValue(box, { orgId, key }, value!), plaintextValue: null })
        .where(and(eq(envVars.orgId, orgId), eq(envVars.key, key)));
    }
    const overlay = await tx
      .select({
        orgId: scriptEnvVars.orgId,
        scriptName: scriptEnvVars.scriptName,
        key: scriptEnvVars.key,
        value: scriptEnvVars.plaintextValue,
      })
      .from(scriptEnvVars)
      .where(isNotNull(scriptEnvVars.plaintextValue))
      .for("update");
    for (const { orgId, scriptName, key, value } of overlay) {
      await tx
        .update(scriptEnvVars)
        .set({ sealedValue: sealEnvValue(box, { orgId, scriptName, key }, value!), plaintextValue: null })
        .where(
          and(eq(scriptEnvVars.orgId, orgId), eq(scriptEnvVars.scriptName, scriptName), eq(scriptEnvVars.key, key)),
        );
    }
    return tenant.length + overlay.length;
  });
}
