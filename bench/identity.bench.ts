// The identity service's hot paths below HTTP: argon2id password hashing at the pool parameters
// (one at a time and as many as the libuv pool runs at once), Ed25519 access-token signing, and
// refresh-token rotation against the store (one session rotating back to back, and independent
// sessions rotating concurrently). On the embedded database, or on a fresh PostgreSQL database
// when TEST_DATABASE_URL is set.
// Run: npx tsx bench/identity.bench.ts [seconds-per-measure=3]
import { randomBytes } from "node:crypto";
import { createSecretBox, SECRET_KEY_BYTES } from "../server/src/crypto/secret-box.js";
import { hashPassword, verifyPassword } from "../server/src/services/identity/password-hashing.js";
import { createPoolKeys } from "../server/src/services/identity/pool-keys.js";
import { createPoolStore, poolRefOf } from "../server/src/services/identity/pool-store.js";
import { accessTokenClaims, issueAccessToken, poolIssuer } from "../server/src/services/identity/pool-tokens.js";
import { createRefreshFamilies } from "../server/src/services/identity/refresh-families.js";
import { openTestDatabase } from "../server/test/test-database.js";

const seconds = Number(process.argv[2] ?? 3);

/** Runs `workers` loops of `op` (told its worker's index) for the duration; answers operations per second. */
async function rate(
  op: (worker: number) => Promise<unknown>,
  workers: number,
  durationMs = seconds * 1000,
): Promise<number> {
  let count = 0;
  const deadline = performance.now() + durationMs;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (performance.now() < deadline) {
        await op(worker);
        count++;
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

const rows: [string, number][] = [];
const stored = await hashPassword("correct horse battery staple");
await rate(() => hashPassword("warm-up"), 1, 500);
rows.push(["argon2id hash, 1 at a time", await rate(() => hashPassword("correct horse battery staple"), 1)]);
rows.push(["argon2id hash, 4 at once (libuv pool)", await rate(() => hashPassword("correct horse battery staple"), 4)]);
rows.push(["argon2id verify, 1 at a time", await rate(() => verifyPassword(stored, "wrong password"), 1)]);
rows.push([
  "argon2id verify, unknown user (dummy hash)",
  await rate(() => verifyPassword(undefined, "wrong password"), 1),
]);

const database = await openTestDatabase();
try {
  const box = createSecretBox(randomBytes(SECRET_KEY_BYTES));
  const pool = await createPoolStore(database.db).create(await database.createOrganization(), { name: "bench" });
  const ref = poolRefOf(pool);
  const keys = createPoolKeys(database.db, box);
  const issuer = poolIssuer("http://localhost:8084", "bench-org", pool);
  const subject = {
    userId: "0f0e0d0c-0b0a-4908-8706-050403020100",
    email: "a@example.com",
    emailVerified: true,
    appRoles: [],
    memberships: [],
  };
  await keys.jwks(ref);
  rows.push([
    "access token sign (EdDSA, active key read from the store)",
    await rate(
      () => issueAccessToken(keys, issuer, accessTokenClaims(issuer, { subject, sessionId: "s" }, Date.now())),
      1,
    ),
  ]);

  const families = createRefreshFamilies(database.db, box);
  let token = (await families.start(ref, { userId: subject.userId, authTimeMs: Date.now() })).refreshToken;
  rows.push([
    `refresh rotation, one session back to back (${database.kind})`,
    await rate(async () => (token = (await families.rotate(ref, token)).refreshToken), 1),
  ]);
  // Each worker rotates a session of its own, as separate clients do.
  const sessions = await Promise.all(
    Array.from(
      { length: 4 },
      async () => (await families.start(ref, { userId: subject.userId, authTimeMs: Date.now() })).refreshToken,
    ),
  );
  rows.push([
    `refresh rotation, 4 sessions concurrently (${database.kind})`,
    await rate(
      async (worker) => (sessions[worker] = (await families.rotate(ref, sessions[worker]!)).refreshToken),
      sessions.length,
    ),
  ]);
} finally {
  await database.close();
}

console.log(`| What | Per second |\n|---|---|`);
for (const [name, perSecond] of rows) console.log(`| ${name} | ${perSecond.toFixed(perSecond < 100 ? 1 : 0)} |`);
