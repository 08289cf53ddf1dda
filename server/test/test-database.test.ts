import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { organizations } from "../src/auth/auth-schema.js";
import { openTestDatabase, type TestDatabase } from "./test-database.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

it(`migrates a fresh database (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"}) with pgvector`, async () => {
  const id = await database.createOrganization("acme");
  const [row] = await database.db.select().from(organizations).where(eq(organizations.id, id));
  expect(row).toMatchObject({ name: "acme", system: false });
  expect(typeof row!.createdAt).toBe("number");
  const result = await database.db.execute("select '[1,2,3]'::vector <=> '[1,2,4]'::vector as distance");
  const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
  expect(rows).toHaveLength(1);
});
