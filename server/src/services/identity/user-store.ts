import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, eq, inArray, like, ne, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { perDatabase } from "../../db/prepared-statements.js";
import { parseEmailAddress } from "./email-address.js";
import {
  identityAuthorizationCodes,
  identityEmailTokens,
  identityMemberships,
  identityUsers,
} from "./identity-schema.js";
import { decodeCursor, keysetPage, pageLimit } from "./keyset-cursor.js";
import type { PoolRef } from "./pool-store.js";
import { revoke, type RevokeReason } from "./refresh-families.js";
import { checkRoleSet } from "./role-catalog.js";
import { createTenantStore, userTenantsJson, type UserTenantRecord } from "./tenant-store.js";
import { isUniqueViolation } from "../../db/sql-state.js";

/** A user as the admin API shows it. */
export interface AppUserRecord {
  readonly id: string;
  readonly email: string;
  readonly emailVerified: boolean;
  readonly appRoles: string[];
  readonly banned: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When it was soft-deleted; 0 for a live user. */
  readonly deletedAt: number;
}

/** A user with the hash sign-in checks. Never leaves the service. */
export interface UserCredentials extends AppUserRecord {
  readonly passwordHash: string | null;
}

export interface UserListQuery {
  /** Only addresses starting with this, compared case-insensitively. */
  readonly emailFilter?: string;
  readonly limit?: number;
  readonly cursor?: string;
  readonly includeDeleted?: boolean;
}

export interface NewUser {
  readonly email: string;
  /** A PHC hash, or null for a user invited to set a password. */
  readonly passwordHash: string | null;
  readonly emailVerified?: boolean;
  readonly appRoles?: readonly string[];
}

/**
 * One pool's users. The managed store keeps them in the platform database; a pool re-pointed at a
 * database of its own gets another implementation of this interface, which is why the store is
 * handed hashes (never passwords) and answers plain records.
 *
 * Sign-in state follows the account in the same transaction: a new password (unless asked to keep
 * them), a ban and a deletion end the user's sessions; a hard delete also removes memberships and
 * pending codes and links. Soft-deleted users are hidden (not found) unless asked for.
 */
export interface UserStore {
  /** ALREADY_EXISTS when a live user has the address. */
  create(input: NewUser): Promise<AppUserRecord>;
  get(userId: string, options?: { readonly includeDeleted?: boolean }): Promise<AppUserRecord | undefined>;
  /** The live user with the tenants it belongs to (what a token says of it), by slug. */
  getWithTenants(
    userId: string,
  ): Promise<{ readonly user: AppUserRecord; readonly tenants: UserTenantRecord[] } | undefined>;
  /** The live users among these ids (in no particular order): the members of a tenant, say. */
  liveByIds(userIds: readonly string[]): Promise<AppUserRecord[]>;
  /** The live user with this address, with its password hash, for sign-in. */
  findByEmail(email: string): Promise<UserCredentials | undefined>;
  list(query: UserListQuery): Promise<{ readonly users: AppUserRecord[]; readonly nextCursor?: string }>;
  /** A new address is unverified unless `emailVerified` says otherwise. */
  update(
    userId: string,
    patch: { readonly email?: string; readonly emailVerified?: boolean },
  ): Promise<AppUserRecord | undefined>;
  setPassword(
    userId: string,
    passwordHash: string,
    options: { readonly endSessions: RevokeReason | false },
  ): Promise<AppUserRecord | undefined>;
  setRoles(userId: string, roles: readonly string[]): Promise<AppUserRecord | undefined>;
  setBanned(userId: string, banned: boolean): Promise<AppUserRecord | undefined>;
  /** Soft by default: hidden and recoverable. Answers whether the user existed. */
  delete(userId: string, options?: { readonly hard?: boolean }): Promise<boolean>;
  /** Brings a soft-deleted user back; ALREADY_EXISTS when a live user took the address meanwhile. */
  restore(userId: string): Promise<AppUserRecord | undefined>;
}

const recordColumns = {
  id: identityUsers.id,
  email: identityUsers.email,
  emailVerified: identityUsers.emailVerified,
  appRoles: identityUsers.appRoles,
  banned: identityUsers.banned,
  createdAt: identityUsers.createdAt,
  updatedAt: identityUsers.updatedAt,
  deletedAt: identityUsers.deletedAt,
};

/** The user the `orgId`, `poolId` and `userId` placeholders name: a live one, unless deleted ones count. */
const placeholderUser = (includeDeleted: boolean) =>
  and(
    eq(identityUsers.orgId, sql.placeholder("orgId")),
    eq(identityUsers.poolId, sql.placeholder("poolId")),
    eq(identityUsers.id, sql.placeholder("userId")),
    includeDeleted ? undefined : eq(identityUsers.deletedAt, 0),
  );
const byId = (includeDeleted: boolean) =>
  perDatabase((db) =>
    db
      .select(recordColumns)
      .from(identityUsers)
      .where(placeholderUser(includeDeleted))
      .prepare(includeDeleted ? "identity_user_any" : "identity_user_live"),
  );
const liveUserById = byId(false);
const anyUserById = byId(true);
/** Read on every token refresh: the user and its memberships in one statement, when they share a database. */
const liveUserWithTenants = perDatabase((db) =>
  db
    .select({
      ...recordColumns,
      tenants: userTenantsJson({
        orgId: sql.raw("identity_users.org_id"),
        poolId: sql.raw("identity_users.pool_id"),
        userId: sql.raw("identity_users.id"),
      }),
    })
    .from(identityUsers)
    .where(placeholderUser(false))
    .prepare("identity_user_with_tenants"),
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const emailTaken = () => new ConnectError("a user with this e-mail address already exists", Code.AlreadyExists);
const touched = sql`greatest((extract(epoch from statement_timestamp()) * 1000)::bigint, ${identityUsers.updatedAt} + 1)`;

export interface UserStoreOptions {
  readonly now?: () => number;
  /**
   * Where the `identity_users` rows live when not in the platform database (a pool's own
   * PostgreSQL database, see postgres-user-store.ts). Sessions, memberships, codes and e-mail
   * tokens stay in the platform database `db`, keyed by user id, so they survive a move; their
   * changes then follow the user's in a second transaction instead of the same one.
   */
  readonly usersDb?: Database;
}

/**
 * The store over an `identity_users` table: the platform's own (the managed store) or the same
 * table in a pool's database (`options.usersDb`).
 */
export function createManagedUserStore(platformDb: Database, pool: PoolRef, options: UserStoreOptions = {}): UserStore {
  const now = options.now ?? Date.now;
  const db = options.usersDb ?? platformDb;
  const separate = db !== platformDb;
  const inPool = and(eq(identityUsers.orgId, pool.orgId), eq(identityUsers.poolId, pool.poolId));
  // An id that is not a UUID names no user: answer "not found" instead of a database type error.
  const user = (userId: string, includeDeleted = false): SQL | undefined =>
    UUID.test(userId)
      ? and(inPool, eq(identityUsers.id, userId), includeDeleted ? undefined : eq(identityUsers.deletedAt, 0))
      : sql`false`;

  /**
   * A soft-deleted user keeps its address (it may be restored), so the address stays taken until
   * a hard delete. The unique index covers live users only: this is the check for the others.
   */
  async function refuseSoftDeletedAddress(normalized: string, exceptUserId?: string): Promise<void> {
    const [held] = await db
      .select({ id: identityUsers.id })
      .from(identityUsers)
      .where(
        and(
          inPool,
          eq(identityUsers.emailNormalized, normalized),
          ne(identityUsers.deletedAt, 0),
          exceptUserId && UUID.test(exceptUserId) ? ne(identityUsers.id, exceptUserId) : undefined,
        ),
      )
      .limit(1);
    if (held) throw emailTaken();
  }

  async function change(
    userId: string,
    set: Partial<typeof identityUsers.$inferInsert>,
    then?: (tx: Database) => Promise<unknown>,
  ) {
    if (separate) {
      const [row] = await db
        .update(identityUsers)
        .set({ ...set, updatedAt: touched })
        .where(user(userId))
        .returning(recordColumns);
      if (row && then) await platformDb.transaction(then);
      return row;
    }
    return db.transaction(async (tx) => {
      const [row] = await tx
        .update(identityUsers)
        .set({ ...set, updatedAt: touched })
        .where(user(userId))
        .returning(recordColumns);
      if (row && then) await then(tx);
      return row;
    });
  }

  return {
    async create(input) {
      const { email, normalized } = parseEmailAddress(input.email);
      await refuseSoftDeletedAddress(normalized);
      const [row] = await db
        .insert(identityUsers)
        .values({
          ...pool,
          email,
          emailNormalized: normalized,
          passwordHash: input.passwordHash,
          emailVerified: input.emailVerified ?? false,
          appRoles: checkRoleSet(input.appRoles ?? [], "appRoles"),
        })
        .onConflictDoNothing()
        .returning(recordColumns);
      if (!row) throw emailTaken();
      return row;
    },

    async get(userId, options) {
      if (!UUID.test(userId)) return undefined;
      const [row] = await (options?.includeDeleted ? anyUserById : liveUserById)(db).execute({ ...pool, userId });
      return row;
    },

    async getWithTenants(userId) {
      if (!UUID.test(userId)) return undefined;
      if (separate) {
        const [user, tenants] = await Promise.all([
          this.get(userId),
          createTenantStore(platformDb, pool).userTenants(userId),
        ]);
        return user && { user, tenants };
      }
      const [row] = await liveUserWithTenants(db).execute({ ...pool, userId });
      if (!row) return undefined;
      const { tenants, ...user } = row;
      return { user, tenants };
    },

    async liveByIds(userIds) {
      const ids = [...new Set(userIds.filter((id) => UUID.test(id)))];
      const found: AppUserRecord[] = [];
      // Bounded batches: one statement's parameter list stays small whatever the tenant's size.
      for (let start = 0; start < ids.length; start += 1000) {
        const batch = ids.slice(start, start + 1000);
        found.push(
          ...(await db
            .select(recordColumns)
            .from(identityUsers)
            .where(and(inPool, inArray(identityUsers.id, batch), eq(identityUsers.deletedAt, 0)))),
        );
      }
      return found;
    },

    async findByEmail(email) {
      const normalized = email.trim().toLowerCase();
      const [row] = await db
        .select({ ...recordColumns, passwordHash: identityUsers.passwordHash })
        .from(identityUsers)
        .where(and(inPool, eq(identityUsers.emailNormalized, normalized), eq(identityUsers.deletedAt, 0)));
      return row;
    },

    async list(query) {
      const limit = pageLimit(query.limit);
      const conditions = [inPool];
      if (!query.includeDeleted) conditions.push(eq(identityUsers.deletedAt, 0));
      if (query.emailFilter)
        conditions.push(
          like(
            identityUsers.emailNormalized,
            `${query.emailFilter
              .trim()
              .toLowerCase()
              .replace(/[\\%_]/g, "\\$&")}%`,
          ),
        );
      if (query.cursor) {
        const [email, id] = decodeCursor("users", query.cursor, 2) as [string, string];
        if (!UUID.test(id))
          throw new ConnectError("cursor is not a cursor from a previous users page", Code.InvalidArgument);
        conditions.push(sql`(${identityUsers.emailNormalized}, ${identityUsers.id}) > (${email}, ${id}::uuid)`);
      }
      const rows = await db
        .select({ ...recordColumns, emailNormalized: identityUsers.emailNormalized })
        .from(identityUsers)
        .where(and(...conditions))
        .orderBy(asc(identityUsers.emailNormalized), asc(identityUsers.id))
        .limit(limit + 1);
      const { page, nextCursor } = keysetPage("users", rows, limit, (row) => [row.emailNormalized, row.id]);
      return { users: page.map(({ emailNormalized: _, ...record }) => record), ...(nextCursor ? { nextCursor } : {}) };
    },

    async update(userId, patch) {
      const address = patch.email === undefined ? undefined : parseEmailAddress(patch.email);
      if (address) await refuseSoftDeletedAddress(address.normalized, userId);
      try {
        return await change(userId, {
          ...(address ? { email: address.email, emailNormalized: address.normalized, emailVerified: false } : {}),
          ...(patch.emailVerified === undefined ? {} : { emailVerified: patch.emailVerified }),
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
    },

    setPassword: (userId, passwordHash, { endSessions }) =>
      change(
        userId,
        { passwordHash },
        endSessions ? (tx) => revoke(tx, pool, { userId }, endSessions, now()) : undefined,
      ),

    setRoles: (userId, roles) => change(userId, { appRoles: checkRoleSet(roles) }),

    setBanned: (userId, banned) =>
      change(userId, { banned }, banned ? (tx) => revoke(tx, pool, { userId }, "user_banned", now()) : undefined),

    async delete(userId, options) {
      const remove = (tx: Database) =>
        options?.hard
          ? tx.delete(identityUsers).where(user(userId, true)).returning({ id: identityUsers.id })
          : tx
              .update(identityUsers)
              .set({ deletedAt: now(), updatedAt: touched })
              .where(user(userId))
              .returning({ id: identityUsers.id });
      // In a pool's own database the account changes first; the platform-side rows follow.
      const removedElsewhere = separate ? (await remove(db)).length > 0 : undefined;
      if (removedElsewhere === false) return false;
      return platformDb.transaction(async (tx) => {
        const found = removedElsewhere ? [userId] : await remove(tx);
        if (found.length === 0) return false;
        await revoke(tx, pool, { userId }, "user_deleted", now());
        if (options?.hard) {
          const mine = <
            T extends typeof identityMemberships | typeof identityEmailTokens | typeof identityAuthorizationCodes,
          >(
            table: T,
          ) => and(eq(table.orgId, pool.orgId), eq(table.poolId, pool.poolId), eq(table.userId, userId));
          await tx.delete(identityMemberships).where(mine(identityMemberships));
          await tx.delete(identityEmailTokens).where(mine(identityEmailTokens));
          await tx.delete(identityAuthorizationCodes).where(mine(identityAuthorizationCodes));
        }
        return true;
      });
    },

    async restore(userId) {
      try {
        const [row] = await db
          .update(identityUsers)
          .set({ deletedAt: 0, updatedAt: touched })
          .where(and(user(userId, true), sql`${identityUsers.deletedAt} <> 0`))
          .returning(recordColumns);
        return row;
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
    },
  };
}
