import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { perDatabase } from "../../db/prepared-statements.js";
import { identityMemberships, identityTenants, identityUsers, type JsonObject } from "./identity-schema.js";
import { decodeCursor, keysetPage, pageLimit } from "./keyset-cursor.js";
import { checkDisplayName, type PoolRef } from "./pool-store.js";
import { checkRoleSet } from "./role-catalog.js";
import { checkSlug } from "./slug-rule.js";
import type { UserStore } from "./user-store.js";

export interface TenantRecord {
  readonly slug: string;
  readonly displayName: string;
  readonly metadata: JsonObject;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface MembershipRecord {
  readonly userId: string;
  readonly email: string;
  readonly roles: string[];
  /** When the user joined the tenant. */
  readonly createdAt: number;
}

export interface UserTenantRecord {
  readonly slug: string;
  readonly displayName: string;
  readonly roles: string[];
  readonly createdAt: number;
}

/**
 * One pool's tenants (sub-organizations, by an immutable slug) and who belongs to them with which
 * roles. Members are the pool's live users: a soft-deleted user's memberships are kept (the user
 * may come back) but not listed and not put into tokens.
 */
export interface TenantStore {
  /** ALREADY_EXISTS when the pool has a tenant with the slug. */
  create(input: {
    readonly slug: string;
    readonly displayName?: string;
    readonly metadata?: JsonObject;
  }): Promise<TenantRecord>;
  get(slug: string): Promise<TenantRecord | undefined>;
  /** The pool's tenants by slug. */
  list(): Promise<TenantRecord[]>;
  update(
    slug: string,
    patch: { readonly displayName?: string; readonly metadata?: JsonObject },
  ): Promise<TenantRecord | undefined>;
  /** Removes the tenant and its memberships. */
  delete(slug: string): Promise<boolean>;
  /** Adds the user or replaces the user's roles in the tenant. NOT_FOUND for an unknown tenant or user. */
  setMember(slug: string, userId: string, roles: readonly string[]): Promise<MembershipRecord>;
  removeMember(slug: string, userId: string): Promise<boolean>;
  /** Members by e-mail address, then user id; NOT_FOUND for an unknown tenant. */
  listMembers(
    slug: string,
    query: { readonly limit?: number; readonly cursor?: string },
  ): Promise<{ readonly members: MembershipRecord[]; readonly nextCursor?: string }>;
  /** The user's tenants by slug, with the user's roles in each: also the `tenants` claim's source. */
  userTenants(userId: string): Promise<UserTenantRecord[]>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const tenantColumns = {
  slug: identityTenants.slug,
  displayName: identityTenants.displayName,
  metadata: identityTenants.metadata,
  createdAt: identityTenants.createdAt,
  updatedAt: identityTenants.updatedAt,
};
/**
 * A user's memberships as a JSON array of {@link UserTenantRecord}s by slug, for a statement that
 * reads a user with its tenants in one go. The arguments are expressions of that statement.
 */
export function userTenantsJson(of: {
  readonly orgId: SQL;
  readonly poolId: SQL;
  readonly userId: SQL;
}): SQL<UserTenantRecord[]> {
  return sql<UserTenantRecord[]>`coalesce((
    select json_agg(json_build_object('slug', t.slug, 'displayName', t.display_name, 'roles', m.roles, 'createdAt', m.created_at) order by t.slug)
      from identity_memberships m join identity_tenants t on t.id = m.tenant_id
     where m.org_id = ${of.orgId} and m.pool_id = ${of.poolId} and m.user_id = ${of.userId}), '[]'::json)`;
}

/** Read on every sign-in, so prepared. */
const tenantsOfUser = perDatabase((db) =>
  db
    .select({
      slug: identityTenants.slug,
      displayName: identityTenants.displayName,
      roles: identityMemberships.roles,
      createdAt: identityMemberships.createdAt,
    })
    .from(identityMemberships)
    .innerJoin(identityTenants, eq(identityTenants.id, identityMemberships.tenantId))
    .where(
      and(
        eq(identityMemberships.orgId, sql.placeholder("orgId")),
        eq(identityMemberships.poolId, sql.placeholder("poolId")),
        eq(identityMemberships.userId, sql.placeholder("userId")),
      ),
    )
    .orderBy(asc(identityTenants.slug))
    .prepare("identity_tenants_of_user"),
);
/** The members list's order: the normalised address as bytes (the database's order), then the id. */
function byAddressThenId(
  a: { readonly emailNormalized: string; readonly userId: string },
  b: { readonly emailNormalized: string; readonly userId: string },
): number {
  return (
    Buffer.compare(Buffer.from(a.emailNormalized, "utf8"), Buffer.from(b.emailNormalized, "utf8")) ||
    (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)
  );
}

const tenantNotFound = (slug: string) => new ConnectError(`tenant "${slug}" not found`, Code.NotFound);

/**
 * `separateUsers` is the pool's user store when its users live in a database of their own: members
 * are then checked and named through it. Without it, they are joined from `db`.
 */
export function createTenantStore(db: Database, pool: PoolRef, separateUsers?: UserStore): TenantStore {
  const inPool = and(eq(identityTenants.orgId, pool.orgId), eq(identityTenants.poolId, pool.poolId));
  const bySlug = (slug: string) => and(inPool, eq(identityTenants.slug, slug));
  const liveUser = (userId: string) =>
    and(
      eq(identityUsers.orgId, pool.orgId),
      eq(identityUsers.poolId, pool.poolId),
      eq(identityUsers.id, userId),
      eq(identityUsers.deletedAt, 0),
    );

  async function tenantId(executor: Database, slug: string): Promise<string> {
    const [row] = await executor.select({ id: identityTenants.id }).from(identityTenants).where(bySlug(slug));
    if (!row) throw tenantNotFound(slug);
    return row.id;
  }

  /**
   * Members whose users live in another database: the memberships are read whole, their users
   * from the pool's store, and the page cut in memory in the same order and with the same cursor
   * as the joined list (address bytes, then id).
   */
  async function listMembersElsewhere(tenant: string, users: UserStore, limit: number, cursor: string | undefined) {
    const memberships = await db
      .select({
        userId: identityMemberships.userId,
        roles: identityMemberships.roles,
        createdAt: identityMemberships.createdAt,
      })
      .from(identityMemberships)
      .where(eq(identityMemberships.tenantId, tenant));
    const live = new Map((await users.liveByIds(memberships.map((m) => m.userId))).map((user) => [user.id, user]));
    const after = cursor ? (decodeCursor("members", cursor, 2) as [string, string]) : undefined;
    const rows = memberships
      .flatMap((membership) => {
        const user = live.get(membership.userId);
        return user ? [{ ...membership, email: user.email, emailNormalized: user.email.trim().toLowerCase() }] : [];
      })
      .sort(byAddressThenId)
      .filter((row) => !after || byAddressThenId({ emailNormalized: after[0], userId: after[1] }, row) < 0)
      .slice(0, limit + 1);
    const { page, nextCursor } = keysetPage("members", rows, limit, (row) => [row.emailNormalized, row.userId]);
    return { members: page.map(({ emailNormalized: _, ...member }) => member), ...(nextCursor ? { nextCursor } : {}) };
  }

  return {
    async create(input) {
      const [row] = await db
        .insert(identityTenants)
        .values({
          ...pool,
          slug: checkSlug("slug", input.slug),
          displayName: checkDisplayName("displayName", input.displayName ?? ""),
          metadata: input.metadata ?? {},
        })
        .onConflictDoNothing()
        .returning(tenantColumns);
      if (!row) throw new ConnectError(`a tenant with slug "${input.slug}" already exists`, Code.AlreadyExists);
      return row;
    },

    async get(slug) {
      const [row] = await db.select(tenantColumns).from(identityTenants).where(bySlug(slug));
      return row;
    },

    list: () => db.select(tenantColumns).from(identityTenants).where(inPool).orderBy(asc(identityTenants.slug)),

    async update(slug, patch) {
      if (patch.displayName !== undefined) checkDisplayName("displayName", patch.displayName);
      const [row] = await db
        .update(identityTenants)
        .set({
          ...patch,
          updatedAt: sql`greatest((extract(epoch from statement_timestamp()) * 1000)::bigint, ${identityTenants.updatedAt} + 1)`,
        })
        .where(bySlug(slug))
        .returning(tenantColumns);
      return row;
    },

    async delete(slug) {
      return (await db.delete(identityTenants).where(bySlug(slug)).returning({ id: identityTenants.id })).length > 0;
    },

    async setMember(slug, userId, roles) {
      const checked = checkRoleSet(roles);
      const liveMember = async (tx: Database): Promise<{ readonly email: string } | undefined> => {
        if (!UUID.test(userId)) return undefined;
        if (separateUsers) return separateUsers.get(userId);
        const [row] = await tx.select({ email: identityUsers.email }).from(identityUsers).where(liveUser(userId));
        return row;
      };
      return db.transaction(async (tx) => {
        const tenant = await tenantId(tx, slug);
        const member = await liveMember(tx);
        if (!member) throw new ConnectError(`user ${userId} not found`, Code.NotFound);
        const [row] = await tx
          .insert(identityMemberships)
          .values({ ...pool, tenantId: tenant, userId, roles: checked })
          .onConflictDoUpdate({
            target: [identityMemberships.tenantId, identityMemberships.userId],
            set: {
              roles: sql`excluded.roles`,
              updatedAt: sql`greatest(excluded.updated_at, ${identityMemberships.updatedAt} + 1)`,
            },
          })
          .returning({
            userId: identityMemberships.userId,
            roles: identityMemberships.roles,
            createdAt: identityMemberships.createdAt,
          });
        return { ...row!, email: member.email };
      });
    },

    async removeMember(slug, userId) {
      if (!UUID.test(userId)) return false;
      const tenant = await tenantId(db, slug);
      const removed = await db
        .delete(identityMemberships)
        .where(and(eq(identityMemberships.tenantId, tenant), eq(identityMemberships.userId, userId)))
        .returning({ userId: identityMemberships.userId });
      return removed.length > 0;
    },

    async listMembers(slug, query) {
      const limit = pageLimit(query.limit);
      const tenant = await tenantId(db, slug);
      if (separateUsers) return listMembersElsewhere(tenant, separateUsers, limit, query.cursor);
      const conditions = [eq(identityMemberships.tenantId, tenant), eq(identityUsers.deletedAt, 0)];
      if (query.cursor) {
        const [email, id] = decodeCursor("members", query.cursor, 2) as [string, string];
        if (!UUID.test(id))
          throw new ConnectError("cursor is not a cursor from a previous members page", Code.InvalidArgument);
        conditions.push(sql`(${identityUsers.emailNormalized}, ${identityUsers.id}) > (${email}, ${id}::uuid)`);
      }
      const rows = await db
        .select({
          userId: identityMemberships.userId,
          email: identityUsers.email,
          emailNormalized: identityUsers.emailNormalized,
          roles: identityMemberships.roles,
          createdAt: identityMemberships.createdAt,
        })
        .from(identityMemberships)
        .innerJoin(identityUsers, eq(identityUsers.id, identityMemberships.userId))
        .where(and(...conditions))
        .orderBy(asc(identityUsers.emailNormalized), asc(identityUsers.id))
        .limit(limit + 1);
      const { page, nextCursor } = keysetPage("members", rows, limit, (row) => [row.emailNormalized, row.userId]);
      return {
        members: page.map(({ emailNormalized: _, ...member }) => member),
        ...(nextCursor ? { nextCursor } : {}),
      };
    },

    async userTenants(userId) {
      if (!UUID.test(userId)) return [];
      return tenantsOfUser(db).execute({ ...pool, userId });
    },
  };
}
