// What one lookup costs this process, by how it is sent: drizzle's builder rebuilding the SQL per
// call, a raw `sql` template, and a prepared statement (server/src/db/prepared-statements.ts).
// 32 lookups in flight at a time, as a busy server has; CPU time of this process per lookup.
// Run: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/prepared-statements.bench.ts
import { and, eq, sql } from "drizzle-orm";
import { perDatabase } from "../server/src/db/prepared-statements.js";
import { identityUsers } from "../server/src/services/identity/identity-schema.js";
import { openTestDatabase } from "../server/test/test-database.js";

const IN_FLIGHT = 32;
const LOOKUPS = 9_600;
const database = await openTestDatabase();
const { db } = database;
const values = {
  orgId: await database.createOrganization(),
  poolId: "00000000-0000-4000-8000-000000000002",
  userId: "00000000-0000-4000-8000-000000000003",
};
const columns = {
  id: identityUsers.id,
  email: identityUsers.email,
  appRoles: identityUsers.appRoles,
  banned: identityUsers.banned,
  createdAt: identityUsers.createdAt,
};
const prepared = perDatabase((handle) =>
  handle
    .select(columns)
    .from(identityUsers)
    .where(
      and(
        eq(identityUsers.orgId, sql.placeholder("orgId")),
        eq(identityUsers.poolId, sql.placeholder("poolId")),
        eq(identityUsers.id, sql.placeholder("userId")),
        eq(identityUsers.deletedAt, 0),
      ),
    )
    .prepare("bench_user_by_id"),
);

async function cpuPerLookup(lookup: () => Promise<unknown>): Promise<number> {
  const worker = async () => {
    for (let i = 0; i < LOOKUPS / IN_FLIGHT; i++) await lookup();
  };
  const run = () => Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await run(); // warm-up: JIT, connections, statements described once per connection
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / LOOKUPS;
}

try {
  const rows: [string, number][] = [
    [
      "builder (SQL built per call, unnamed statement)",
      await cpuPerLookup(() =>
        db
          .select(columns)
          .from(identityUsers)
          .where(
            and(
              eq(identityUsers.orgId, values.orgId),
              eq(identityUsers.poolId, values.poolId),
              eq(identityUsers.id, values.userId),
              eq(identityUsers.deletedAt, 0),
            ),
          ),
      ),
    ],
    [
      "raw sql template (unnamed statement)",
      await cpuPerLookup(() =>
        db.execute(
          sql`select id, email, app_roles, banned, created_at from identity_users where org_id = ${values.orgId} and pool_id = ${values.poolId} and id = ${values.userId} and deleted_at = 0`,
        ),
      ),
    ],
    ["prepared statement", await cpuPerLookup(() => prepared(db).execute(values))],
    ["baseline: `select 1`, no parameters", await cpuPerLookup(() => db.execute(sql`select 1`))],
  ];
  console.log(
    `\nOne four-condition lookup, ${database.kind}, ${IN_FLIGHT} in flight\n\n| How | CPU per lookup |\n|---|---|`,
  );
  for (const [how, micros] of rows) console.log(`| ${how} | ${micros.toFixed(0)} µs |`);
} finally {
  await database.close();
}
