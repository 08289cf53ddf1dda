import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../crypto/secret-box.js";
import { createEnvStore, type EnvStore } from "./env-store.js";

const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";

let database: TestDatabase;
let store: EnvStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createEnvStore(database.db, createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES))));
});
afterAll(() => database.close());

describe(`tenant variables (${engine})`, () => {
  it("sets, overwrites, reads and deletes one variable", async () => {
    const org = await database.createOrganization();
    expect(await store.getEnvVar(org, "A")).toBeUndefined();
    await store.setEnvVar(org, "A", "1");
    expect(await store.getEnvVar(org, "A")).toBe("1");
    await store.setEnvVar(org, "A", "2");
    expect(await store.getEnvVar(org, "A")).toBe("2");
    expect(await store.deleteEnvVar(org, "A")).toBe(true);
    expect(await store.deleteEnvVar(org, "A")).toBe(false);
    expect(await store.getEnvVar(org, "A")).toBeUndefined();
  });

  it("lists by key in code-point order on every engine", async () => {
    const org = await database.createOrganization();
    for (const key of ["b", "B", "_z", "a1", "A", "a_", "Z9"]) await store.setEnvVar(org, key, key.toLowerCase());
    expect((await store.listEnvVars(org)).map((entry) => entry.key)).toEqual(["A", "B", "Z9", "_z", "a1", "a_", "b"]);
    expect(await store.listEnvVars(await database.createOrganization())).toEqual([]);
  });

  it("imports by overwriting and adding, leaving other keys untouched", async () => {
    const org = await database.createOrganization();
    await store.setEnvVar(org, "KEEP", "k");
    await store.setEnvVar(org, "OVER", "old");
    expect(await store.importEnvVars(org, { OVER: "new", ADD: "a" })).toBe(2);
    expect(await store.listEnvVars(org)).toEqual([
      { key: "ADD", value: "a" },
      { key: "KEEP", value: "k" },
      { key: "OVER", value: "new" },
    ]);
  });

  it("imports across several statements", async () => {
    const org = await database.createOrganization();
    const vars = Object.fromEntries(
      Array.from({ length: 2_500 }, (_, i) => [`K${String(i).padStart(4, "0")}`, `v${i}`]),
    );
    expect(await store.importEnvVars(org, vars)).toBe(2_500);
    const listed = await store.listEnvVars(org);
    expect(listed).toHaveLength(2_500);
    expect(listed[2_499]).toEqual({ key: "K2499", value: "v2499" });
  });

  it("imports all or nothing: a failing later statement leaves no row of the earlier ones", async () => {
    const org = await database.createOrganization();
    const vars = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`K${String(i).padStart(4, "0")}`, "v"]));
    // PostgreSQL text cannot hold NUL: the row in the second statement fails after the first one ran.
    delete vars.K1499;
    vars["K1499\0"] = "v";
    await expect(store.importEnvVars(org, vars)).rejects.toThrow();
    expect(await store.listEnvVars(org)).toEqual([]);
  });

  it("keeps values byte for byte", async () => {
    const org = await database.createOrganization();
    const value = "line 1\nline 2\t'quoted' \"double\" é 🚀 ".repeat(100);
    await store.setEnvVar(org, "PEM", value);
    expect(await store.getEnvVar(org, "PEM")).toBe(value);
  });

  it("never reaches another organization's variables", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    await store.setEnvVar(orgA, "SHARED", "a");
    expect(await store.getEnvVar(orgB, "SHARED")).toBeUndefined();
    expect(await store.listEnvVars(orgB)).toEqual([]);
    expect(await store.deleteEnvVar(orgB, "SHARED")).toBe(false);
    await store.setEnvVar(orgB, "SHARED", "b");
    await store.importEnvVars(orgB, { SHARED: "b2" });
    expect(await store.getEnvVar(orgA, "SHARED")).toBe("a");
  });
});

describe(`script overlays (${engine})`, () => {
  it("is empty for a script without an overlay", async () => {
    const org = await database.createOrganization();
    expect(await store.getScriptEnv(org, "etl")).toEqual([]);
  });

  it("upserts, keeps empty values, deletes, ignores absent keys and returns the overlay sorted", async () => {
    const org = await database.createOrganization();
    const seeded = await store.updateScriptEnv(org, "etl", { set: { b: "1", A: "", C: "3" }, delete: [] });
    expect(seeded).toEqual([
      { key: "A", value: "" },
      { key: "C", value: "3" },
      { key: "b", value: "1" },
    ]);
    const updated = await store.updateScriptEnv(org, "etl", { set: { C: "", D: "4" }, delete: ["b", "NEVER_SET"] });
    expect(updated).toEqual([
      { key: "A", value: "" },
      { key: "C", value: "" },
      { key: "D", value: "4" },
    ]);
    expect(await store.getScriptEnv(org, "etl")).toEqual(updated);
    expect(await store.updateScriptEnv(org, "etl", { set: {}, delete: [] })).toEqual(updated);
  });

  it("keeps each script's overlay and the tenant variables apart", async () => {
    const org = await database.createOrganization();
    await store.setEnvVar(org, "A", "tenant");
    await store.updateScriptEnv(org, "one", { set: { A: "one" }, delete: [] });
    await store.updateScriptEnv(org, "two", { set: { B: "two" }, delete: ["A"] });
    expect(await store.getScriptEnv(org, "one")).toEqual([{ key: "A", value: "one" }]);
    expect(await store.getScriptEnv(org, "two")).toEqual([{ key: "B", value: "two" }]);
    expect(await store.getEnvVar(org, "A")).toBe("tenant");
  });

  it("applies large updates across statements in one call", async () => {
    const org = await database.createOrganization();
    const set = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`K${i}`, ""]));
    expect(await store.updateScriptEnv(org, "big", { set, delete: [] })).toHaveLength(1_500);
    const remaining = await store.updateScriptEnv(org, "big", { set: {}, delete: Object.keys(set).slice(0, 1_499) });
    expect(remaining).toEqual([{ key: "K1499", value: "" }]);
  });

  it("never reaches another organization's overlay", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    await store.updateScriptEnv(orgA, "etl", { set: { A: "a" }, delete: [] });
    expect(await store.getScriptEnv(orgB, "etl")).toEqual([]);
    expect(await store.updateScriptEnv(orgB, "etl", { set: { B: "b" }, delete: ["A"] })).toEqual([
      { key: "B", value: "b" },
    ]);
    expect(await store.getScriptEnv(orgA, "etl")).toEqual([{ key: "A", value: "a" }]);
  });
});
