import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Database } from "../../db/database.js";
import { identityUsers } from "./identity-schema.js";

/** A connection to a pool's own user database, and how to let it go. */
export interface UserStoreConnection {
  readonly db: Database;
  close(): Promise<void>;
}

/**
 * The `identity_users` table of a pool's own PostgreSQL database: the platform's table without the
 * foreign key to the pool (the pool lives elsewhere), so the managed store's queries run unchanged
 * against it. Rows carry their pool, so one database can hold several pools. Idempotent; the
 * advisory lock keeps two processes creating it at once from colliding in the catalog.
 */
const USERS_DDL = [
  sql`select pg_advisory_xact_lock(4081726351)`,
  sql`create table if not exists identity_users (
    id uuid primary key default gen_random_uuid(),
    org_id uuid not null,
    pool_id uuid not null,
    email text not null,
    email_normalized text collate "C" not null,
    email_verified boolean not null default false,
    password_hash text,
    app_roles text[] not null default '{}'::text[],
    banned boolean not null default false,
    deleted_at bigint not null default 0,
    created_at bigint not null default (extract(epoch from statement_timestamp()) * 1000)::bigint,
    updated_at bigint not null default (extract(epoch from statement_timestamp()) * 1000)::bigint
  )`,
  sql`create unique index if not exists identity_users_email_unique on identity_users (pool_id, email_normalized) where deleted_at = 0`,
  sql`create index if not exists identity_users_list_idx on identity_users (pool_id, email_normalized, id)`,
];

export async function ensureUserStoreSchema(db: Database): Promise<void> {
  await db.transaction(async (tx) => {
    for (const statement of USERS_DDL) await tx.execute(statement);
  });
}

/** Opens a small connection pool to a `postgres://` user store; nothing connects until the first query. */
export function connectPostgresUserStore(url: string): UserStoreConnection {
  const client = postgres(url, { max: 4, onnotice: () => {}, idle_timeout: 60 });
  const db = drizzle({ client, schema: { identityUsers } }) as unknown as Database;
  return { db, close: () => client.end({ timeout: 5 }) };
}
