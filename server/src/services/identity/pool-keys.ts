import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, eq, sql } from "drizzle-orm";
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from "jose";
import type { Database } from "../../db/database.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { identityPoolKeys, identityPools, type PublicOkpJwk } from "./identity-schema.js";
import type { PoolRef } from "./pool-store.js";

/** A key as the pool's JWKS publishes it (RFC 8037 OKP, Ed25519). */
export interface PublishedJwk extends PublicOkpJwk {
  readonly kid: string;
  readonly use: "sig";
  readonly alg: "EdDSA";
}

/**
 * Each pool's Ed25519 signing keys. One key is active and signs; a rotation retires it, and retired
 * keys stay published and keep verifying, so tokens signed before a rotation live out their 15
 * minutes. A pool gets its first key when it first needs one. Private keys are sealed with the
 * server's secret box, bound to their pool and kid.
 */
export interface PoolKeys {
  /** The pool's JWKS: every published key, newest first. */
  jwks(pool: PoolRef): Promise<{ keys: PublishedJwk[] }>;
  /** Signs a JWT with the pool's active key; `typ` goes into the protected header. */
  sign(pool: PoolRef, payload: JWTPayload, typ: string): Promise<string>;
  /**
   * Verifies a JWT's signature with one of THIS pool's published keys (chosen by `kid`), and its
   * claims with `options`. Throws jose's errors; callers decide what a failure means to them.
   */
  verify(pool: PoolRef, token: string, options: JWTVerifyOptions): Promise<JWTVerifyResult>;
  /** Makes a new active key and retires the old one; answers the new key. */
  rotate(pool: PoolRef): Promise<PublishedJwk>;
}

const ALG = "EdDSA";
/** Imported keys by `pool:kid`. A kid never changes its key, so entries never go stale. */
const CACHE_LIMIT = 10_000;
/**
 * How long a process signs with the active key it last read before reading it again. A rotation
 * made by another process reaches this one within that time; until then tokens carry the retired
 * key, which stays published and verifying, so nothing breaks. It saves a read per token minted.
 */
const ACTIVE_KEY_TTL_MS = 10_000;

export function createPoolKeys(db: Database, box: SecretBox): PoolKeys {
  const privateKeys = new Map<string, CryptoKey>();
  const publicKeys = new Map<string, CryptoKey>();
  const activeRows = new Map<string, { readonly row: typeof identityPoolKeys.$inferSelect; readonly until: number }>();
  const sealContext = (pool: PoolRef, kid: string) => `identity-pool-key:${pool.orgId}:${pool.poolId}:${kid}`;
  const scoped = (pool: PoolRef) =>
    and(eq(identityPoolKeys.orgId, pool.orgId), eq(identityPoolKeys.poolId, pool.poolId));

  async function newKeyRow(pool: PoolRef) {
    const { publicKey, privateKey } = await generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
    const { x } = await exportJWK(publicKey);
    const publicJwk: PublicOkpJwk = { kty: "OKP", crv: "Ed25519", x: x! };
    const kid = await calculateJwkThumbprint(publicJwk, "sha256");
    const sealedPrivateKey = box.seal(
      Buffer.from(JSON.stringify(await exportJWK(privateKey)), "utf8"),
      sealContext(pool, kid),
    );
    return { ...pool, kid, publicJwk, sealedPrivateKey };
  }

  async function activeKey(pool: PoolRef) {
    const cached = activeRows.get(pool.poolId);
    if (cached && cached.until > Date.now()) return cached.row;
    const row = await readActiveKey(pool);
    if (activeRows.size >= CACHE_LIMIT) activeRows.clear();
    activeRows.set(pool.poolId, { row, until: Date.now() + ACTIVE_KEY_TTL_MS });
    return row;
  }

  async function readActiveKey(pool: PoolRef) {
    const active = () =>
      db
        .select()
        .from(identityPoolKeys)
        .where(and(scoped(pool), eq(identityPoolKeys.state, "active")));
    const [found] = await active();
    if (found) return found;
    // Two replicas may race to make the first key: the one-active index lets one insert win, and
    // both then sign with the winner's key.
    await db
      .insert(identityPoolKeys)
      .values(await newKeyRow(pool))
      .onConflictDoNothing();
    const [created] = await active();
    if (!created) throw new ConnectError("the pool has no signing key", Code.NotFound);
    return created;
  }

  async function privateKeyOf(pool: PoolRef, row: typeof identityPoolKeys.$inferSelect): Promise<CryptoKey> {
    const cacheKey = `${pool.poolId}:${row.kid}`;
    const cached = privateKeys.get(cacheKey);
    if (cached) return cached;
    const jwk = JSON.parse(
      Buffer.from(box.open(row.sealedPrivateKey, sealContext(pool, row.kid))).toString("utf8"),
    ) as JWK;
    const key = (await importJWK(jwk, ALG)) as CryptoKey;
    remember(privateKeys, cacheKey, key);
    return key;
  }

  async function publicKeyOf(pool: PoolRef, kid: string | undefined): Promise<CryptoKey> {
    if (!kid) throw new ConnectError("the token names no key (kid)", Code.Unauthenticated);
    const cacheKey = `${pool.poolId}:${kid}`;
    const cached = publicKeys.get(cacheKey);
    if (cached) return cached;
    const [row] = await db
      .select({ publicJwk: identityPoolKeys.publicJwk })
      .from(identityPoolKeys)
      .where(and(scoped(pool), eq(identityPoolKeys.kid, kid)));
    if (!row) throw new ConnectError("the token was not signed by a key of this pool", Code.Unauthenticated);
    const key = (await importJWK({ ...row.publicJwk }, ALG)) as CryptoKey;
    remember(publicKeys, cacheKey, key);
    return key;
  }

  return {
    async jwks(pool) {
      await activeKey(pool);
      const rows = await db
        .select()
        .from(identityPoolKeys)
        .where(scoped(pool))
        .orderBy(asc(identityPoolKeys.state), sql`${identityPoolKeys.createdAt} desc`);
      return { keys: rows.map((row) => published(row.kid, row.publicJwk)) };
    },

    async sign(pool, payload, typ) {
      const row = await activeKey(pool);
      return new SignJWT(payload)
        .setProtectedHeader({ alg: ALG, kid: row.kid, typ })
        .sign(await privateKeyOf(pool, row));
    },

    verify: (pool, token, options) =>
      jwtVerify(token, (header) => publicKeyOf(pool, header.kid), { ...options, algorithms: [ALG] }),

    async rotate(pool) {
      const row = await newKeyRow(pool);
      await db.transaction(async (tx) => {
        // The pool row's lock orders concurrent rotations: each retires the key the previous one made.
        const [found] = await tx
          .select({ id: identityPools.id })
          .from(identityPools)
          .where(and(eq(identityPools.orgId, pool.orgId), eq(identityPools.id, pool.poolId)))
          .for("update");
        if (!found) throw new ConnectError("pool not found", Code.NotFound);
        await tx
          .update(identityPoolKeys)
          .set({ state: "retired", retiredAt: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint` })
          .where(and(scoped(pool), eq(identityPoolKeys.state, "active")));
        await tx.insert(identityPoolKeys).values(row);
      });
      activeRows.delete(pool.poolId);
      return published(row.kid, row.publicJwk);
    },
  };
}

function published(kid: string, jwk: PublicOkpJwk): PublishedJwk {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, use: "sig", alg: ALG };
}

function remember(cache: Map<string, CryptoKey>, key: string, value: CryptoKey): void {
  // Many pools on one server: drop everything rather than grow without bound; misses only cost an import.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
}
