import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../script/dsl/cel-json.js";
import { connectErrorOf, openVectorFixture, type VectorFixture } from "../vector/vector-test-fixture.js";
import { parseCsv } from "./table-parsers.js";
import { TableStore } from "./table-store.js";

// The store over a real engine database: the bucket's implicit auto engine, provisioned on first
// creation, in the embedded vector database, or in a database of its own on TEST_DATABASE_URL's server.

let fixture: VectorFixture;
let store: TableStore;
const buckets = new Set<string>();

beforeAll(async () => {
  fixture = await openVectorFixture();
  store = new TableStore({
    buckets: { exists: async (orgId, bucket) => buckets.has(`${orgId}/${bucket}`) },
    async engineDatabase(orgId, bucket, provision) {
      if (!provision && !(await fixture.service.engines.find(orgId, bucket))) return undefined;
      return (await fixture.service.engineDatabase(orgId, bucket)).executor;
    },
  });
});
afterAll(() => fixture?.close());

async function bucketOfNewOrg(bucket = "data") {
  const orgId = await fixture.database.createOrganization();
  buckets.add(`${orgId}/${bucket}`);
  return orgId;
}

const PEOPLE = [
  { name: "id", type: "integer" },
  { name: "name", type: "string" },
  { name: "score", type: "number" },
  { name: "active", type: "boolean" },
  { name: "seen_at", type: "timestamp" },
  { name: "extra", type: "json" },
];

describe("table store", () => {
  it("creates, writes typed rows, reads them back in order, describes and drops", async () => {
    const orgId = await bucketOfNewOrg();
    const created = await store.createTable(orgId, "data", "people", PEOPLE, ["id"]);
    expect(created).toMatchObject({ name: "people", mergeKeys: ["id"], rowCount: 0 });
    expect(created.columns).toEqual(PEOPLE);

    const written = await store.writeRows(orgId, "data", "people", [
      { id: 2, name: "Bo", score: 1.25, active: true, seen_at: "2024-03-01T10:00:00.5+02:00", extra: { tags: ["a"] } },
      { id: "1", name: "Al", score: "3", active: "false", seen_at: "2024-03-02" },
      { id: 9007199254740991, name: "", extra: "just text" },
    ]);
    expect(written).toBe(3);

    const page = await store.readRows(orgId, "data", "people");
    expect(page.rowCount).toBe(3);
    expect(page.rows).toEqual([
      { id: 2, name: "Bo", score: 1.25, active: true, seen_at: "2024-03-01T08:00:00.5Z", extra: { tags: ["a"] } },
      { id: 1, name: "Al", score: 3, active: false, seen_at: "2024-03-02T00:00:00Z", extra: null },
      { id: 9007199254740991, name: "", score: null, active: null, seen_at: null, extra: "just text" },
    ]);
    expect((await store.readRows(orgId, "data", "people", { limit: 1, offset: 1 })).rows.map((r) => r.id)).toEqual([1]);

    const description = await store.describe(orgId, "data", "people");
    expect(description.rowCount).toBe(3);
    expect(Object.fromEntries(description.columns.map((c) => [c.name, c.nullRatio]))).toEqual({
      id: 0,
      name: 0,
      score: 1 / 3,
      active: 1 / 3,
      seen_at: 1 / 3,
      extra: 1 / 3,
    });
    expect((await store.getTable(orgId, "data", "people")).rowCount).toBe(3);
    expect((await store.listTables(orgId, "data")).map((t) => t.name)).toEqual(["people"]);

    await store.dropTable(orgId, "data", "people");
    expect(await store.listTables(orgId, "data")).toEqual([]);
    expect((await connectErrorOf(() => store.getTable(orgId, "data", "people"))).rawMessage).toBe(
      "table people not found in bucket data",
    );
  });

  it("merges on the merge keys, the last of repeated keys winning, keeping each row's place", async () => {
    const orgId = await bucketOfNewOrg();
    await store.createTable(
      orgId,
      "data",
      "stock",
      [
        { name: "shop", type: "string" },
        { name: "sku", type: "string" },
        { name: "qty", type: "integer" },
      ],
      ["shop", "sku"],
    );
    await store.writeRows(orgId, "data", "stock", [
      { shop: "a", sku: "x", qty: 1 },
      { shop: "a", sku: "y", qty: 2 },
    ]);
    const written = await store.writeRows(
      orgId,
      "data",
      "stock",
      [
        { shop: "a", sku: "x", qty: 10 },
        { shop: "b", sku: "x", qty: 5 },
        { shop: "a", sku: "x", qty: 11 },
      ],
      "merge",
    );
    expect(written).toBe(2);
    expect((await store.readRows(orgId, "data", "stock")).rows).toEqual([
      { shop: "a", sku: "x", qty: 11 },
      { shop: "a", sku: "y", qty: 2 },
      { shop: "b", sku: "x", qty: 5 },
    ]);
    // Appending a key already there is refused, and nothing of that write stays.
    const duplicate = await connectErrorOf(() =>
      store.writeRows(orgId, "data", "stock", [
        { shop: "c", sku: "z", qty: 1 },
        { shop: "a", sku: "y", qty: 3 },
      ]),
    );
    expect(duplicate.code).toBe(Code.AlreadyExists);
    expect((await store.getTable(orgId, "data", "stock")).rowCount).toBe(3);
    const nullKey = await connectErrorOf(() =>
      store.writeRows(orgId, "data", "stock", [{ shop: "c", qty: 1 }], "merge"),
    );
    expect(nullKey.rawMessage).toBe("rows[0].sku is required: it is a merge key of table stock");
  });

  it("writes all or nothing: a bad value names its row and column and no row stays", async () => {
    const orgId = await bucketOfNewOrg();
    await store.createTable(orgId, "data", "t", PEOPLE);
    const rows = Array.from({ length: 2500 }, (_, i) => ({ id: i, name: `n${i}` }));
    expect(await store.writeRows(orgId, "data", "t", rows)).toBe(2500);
    const bad = await connectErrorOf(() => store.writeRows(orgId, "data", "t", [...rows, { id: 1, active: "maybe" }]));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toBe('rows[2500].active: expected true or false, got "maybe" (column type boolean)');
    const unknown = await connectErrorOf(() => store.writeRows(orgId, "data", "t", [{ id: 1, colour: "red" }]));
    expect(unknown.rawMessage).toBe("rows[0].colour is not a column of table t");
    expect((await store.getTable(orgId, "data", "t")).rowCount).toBe(2500);
    // Order across batches is insertion order.
    const tail = await store.readRows(orgId, "data", "t", { limit: 3, offset: 999 });
    expect(tail.rows.map((row) => row.id)).toEqual([999, 1000, 1001]);
  });

  it("refuses merge without merge keys, bad names and types, and a taken name", async () => {
    const orgId = await bucketOfNewOrg();
    await store.createTable(orgId, "data", "plain", [{ name: "a", type: "string" }]);
    const merge = await connectErrorOf(() => store.writeRows(orgId, "data", "plain", [{ a: "x" }], "merge"));
    expect(merge.code).toBe(Code.FailedPrecondition);
    const taken = await connectErrorOf(() =>
      store.createTable(orgId, "data", "plain", [{ name: "a", type: "string" }]),
    );
    expect(taken.code).toBe(Code.AlreadyExists);
    const cases: [() => Promise<unknown>, string][] = [
      [() => store.createTable(orgId, "data", "Bad-Name", [{ name: "a", type: "string" }]), "name"],
      [() => store.createTable(orgId, "data", "t2", [{ name: "a", type: "text" }]), "columns[0].type"],
      [() => store.createTable(orgId, "data", "t2", [{ name: "1a", type: "string" }]), "columns[0].name"],
      [() => store.createTable(orgId, "data", "t2", [{ name: "__row", type: "string" }]), "columns[0].name"],
      [() => store.createTable(orgId, "data", "t2", [{ name: "a", type: "string" }], ["b"]), "merge_keys[0]"],
      [() => store.createTable(orgId, "data", "t2", []), "columns"],
    ];
    for (const [work, field] of cases) {
      const error = await connectErrorOf(work);
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage.startsWith(field)).toBe(true);
    }
    // Replacing drops the old table and its rows in the same transaction.
    await store.writeRows(orgId, "data", "plain", [{ a: "x" }]);
    const replaced = await store.createTable(orgId, "data", "plain", [{ name: "b", type: "integer" }], [], {
      replace: true,
    });
    expect(replaced).toMatchObject({ columns: [{ name: "b", type: "integer" }], rowCount: 0 });
  });

  it("creates tables concurrently on a fresh bucket, one creation of a name winning", async () => {
    const orgId = await bucketOfNewOrg();
    const columns = [{ name: "a", type: "string" }];
    const outcomes = await Promise.allSettled(
      ["one", "two", "three", "one"].map((name) => store.createTable(orgId, "data", name, columns)),
    );
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
    const lost = outcomes.find((outcome) => outcome.status === "rejected") as PromiseRejectedResult;
    expect((lost.reason as { code?: Code }).code).toBe(Code.AlreadyExists);
    expect((await store.listTables(orgId, "data")).map((table) => table.name)).toEqual(["one", "three", "two"]);
    // Concurrent writes to one table all land.
    await Promise.all(
      Array.from({ length: 4 }, (_, i) => store.writeRows(orgId, "data", "one", [{ a: `w${i}` }, { a: `x${i}` }])),
    );
    expect((await store.getTable(orgId, "data", "one")).rowCount).toBe(8);
  });

  it("loads rows creating the table if missing, inferring its columns, or replacing it, all or nothing", async () => {
    const orgId = await bucketOfNewOrg();
    const rows: JsonObject[] = [
      { sku: "a", qty: 1, at: "2024-01-01" },
      { sku: "b", qty: 2.5, tags: ["x"] },
    ];
    expect(await store.loadTable(orgId, "data", "inv", rows, { create: "if_missing" })).toEqual({
      written: 2,
      created: true,
    });
    expect((await store.getTable(orgId, "data", "inv")).columns).toEqual([
      { name: "sku", type: "string" },
      { name: "qty", type: "number" },
      { name: "at", type: "timestamp" },
      { name: "tags", type: "json" },
    ]);
    // An existing table keeps its columns, even for an empty load.
    expect(await store.loadTable(orgId, "data", "inv", [], { create: "if_missing" })).toEqual({
      written: 0,
      created: false,
    });
    // A failing load that was to replace the table leaves the old one as it was.
    const bad = await connectErrorOf(() =>
      store.loadTable(orgId, "data", "inv", [{ sku: "c", qty: 1 }], {
        create: "replace",
        columns: [
          { name: "sku", type: "string" },
          { name: "qty", type: "boolean" },
        ],
      }),
    );
    expect(bad.rawMessage).toBe("rows[0].qty: expected true or false, got 1 (column type boolean)");
    expect((await store.getTable(orgId, "data", "inv")).rowCount).toBe(2);
    // A failing load that was to create a table leaves none.
    await connectErrorOf(() =>
      store.loadTable(orgId, "data", "fresh", [{ a: 1 }, { a: "x", b: {} }], {
        create: "if_missing",
        columns: [{ name: "a", type: "integer" }],
      }),
    );
    expect(await store.findTable(orgId, "data", "fresh")).toBeUndefined();
    const replaced = await store.loadTable(orgId, "data", "inv", [{ id: 7, name: "n" }], {
      create: "replace",
      mergeKeys: ["id"],
    });
    expect(replaced).toEqual({ written: 1, created: true });
    expect(await store.getTable(orgId, "data", "inv")).toMatchObject({ mergeKeys: ["id"], rowCount: 1 });
    const badKeys = await connectErrorOf(() =>
      store.loadTable(orgId, "data", "other", [{ "Order ID": 1 }], { create: "if_missing" }),
    );
    expect(badKeys.rawMessage).toMatch(/^the columns inferred from rows: columns\[0\]\.name "Order ID"/);
    const missing = await connectErrorOf(() => store.loadTable(orgId, "data", "absent", [{ a: 1 }]));
    expect(missing.code).toBe(Code.NotFound);
  });

  it("keeps buckets and organizations apart and never provisions an engine to read", async () => {
    const orgId = await bucketOfNewOrg();
    const other = await bucketOfNewOrg();
    buckets.add(`${orgId}/second`);
    await store.createTable(orgId, "data", "mine", [{ name: "a", type: "string" }]);
    expect(await store.listTables(orgId, "second")).toEqual([]);
    expect(await fixture.service.engines.find(orgId, "second")).toBeUndefined();
    const foreign = await connectErrorOf(() => store.getTable(other, "data", "mine"));
    expect(foreign.code).toBe(Code.NotFound);
    const noBucket = await connectErrorOf(() => store.readRows(orgId, "nope", "mine"));
    expect(noBucket.rawMessage).toBe("bucket nope not found");
    expect((await connectErrorOf(() => store.dropTable(orgId, "second", "mine"))).code).toBe(Code.NotFound);
  });

  it("imports a parsed CSV into a table created from the inferred columns", async () => {
    const orgId = await bucketOfNewOrg();
    const parsed = parseCsv("Id,Amount,Day\n1,2.5,2024-01-01\n2,,2024-01-02\n");
    await store.createTable(orgId, "data", "imported", parsed.columns);
    expect(await store.writeRows(orgId, "data", "imported", parsed.rows)).toBe(2);
    expect((await store.readRows(orgId, "data", "imported")).rows).toEqual([
      { id: 1, amount: 2.5, day: "2024-01-01T00:00:00Z" },
      { id: 2, amount: null, day: "2024-01-02T00:00:00Z" },
    ]);
  });
});
