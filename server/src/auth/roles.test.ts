import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { SecretService } from "../../../gen/platform/compute/v1/secret_service_pb.js";
import { IamService } from "../../../gen/platform/iam/v1/iam_service_pb.js";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import { findRole, holdsRole, requiredRole, roleCatalog, roleCatalogMarkdown, serviceRoleRules } from "./roles.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const genRoot = resolve(here, "../../../gen");

/** Every service descriptor generated from the contract, found on disk so a new one is covered too. */
async function generatedServices(): Promise<DescService[]> {
  const files = (await readdir(genRoot, { recursive: true })).filter((f) => f.endsWith("_service_pb.ts"));
  const services: DescService[] = [];
  for (const file of files) {
    const module = (await import(join(genRoot, file))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "service")
        services.push(value as DescService);
    }
  }
  return services;
}

const services = await generatedServices();
const method = (service: DescService, name: string) => service.methods.find((m) => m.name === name)!;
const allows = (service: DescService, name: string, role: string) =>
  requiredRole(service, method(service, name)).anyOf.includes(role);

describe("requiredRole over every generated method", () => {
  it("finds the generated services", () => {
    expect(services.length).toBeGreaterThanOrEqual(11);
    expect(services.map((s) => s.typeName).sort()).toEqual(Object.keys(serviceRoleRules).sort());
  });

  for (const service of services) {
    it(`${service.typeName}: every method needs known roles, readers read, writers write`, () => {
      const rule = serviceRoleRules[service.typeName]!;
      for (const m of service.methods) {
        const { anyOf } = requiredRole(service, m);
        expect(anyOf.length, m.name).toBeGreaterThan(0);
        for (const role of anyOf) expect(findRole(role), `${m.name} names ${role}`).toBeDefined();
        if (service.typeName === "platform.iam.v1.IamService") continue;
        // Owner does everything in its organization; the operator nothing outside IAM.
        expect(anyOf, m.name).toContain("owner");
        expect(anyOf, m.name).not.toContain("operator");
        const readOnly = m.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
        const isGetSecret = service.typeName === "platform.compute.v1.SecretService" && m.name === "GetSecret";
        expect(anyOf.includes(rule.read), `${m.name} open to ${rule.read}`).toBe(readOnly && !isGetSecret);
        expect(anyOf, m.name).toContain(rule.write);
      }
    });
  }

  it("GetSecret returns cleartext, so it needs secrets.admin; listing needs only secrets.viewer", () => {
    expect(requiredRole(SecretService, method(SecretService, "GetSecret")).anyOf).toEqual(["secrets.admin", "owner"]);
    expect(allows(SecretService, "ListSecrets", "secrets.viewer")).toBe(true);
    expect(allows(SecretService, "CreateSecret", "secrets.viewer")).toBe(false);
    expect(allows(SecretService, "DeleteSecret", "secrets.admin")).toBe(true);
  });

  it("every IAM method needs iam.admin, owner or the operator; creating organizations only the operator", () => {
    for (const m of IamService.methods) {
      const { anyOf } = requiredRole(IamService, m);
      if (m.name === "CreateOrganization") expect(anyOf).toEqual(["operator"]);
      else expect([...anyOf].sort()).toEqual(["iam.admin", "operator", "owner"]);
    }
  });

  it("a higher tier satisfies what a lower one does", () => {
    expect(requiredRole(ScriptService, method(ScriptService, "GetThread")).anyOf).toEqual([
      "script.viewer",
      "script.editor",
      "owner",
    ]);
    expect(requiredRole(ScriptService, method(ScriptService, "CreateThread")).anyOf).toEqual([
      "script.editor",
      "owner",
    ]);
  });

  it("refuses a service it has no rule for", () => {
    const stranger = { ...ScriptService, typeName: "platform.unknown.v1.StrangeService" } as DescService;
    expect(() => requiredRole(stranger, ScriptService.methods[0]!)).toThrow(
      /no role rule for platform.unknown.v1.StrangeService/,
    );
  });
});

describe("holdsRole", () => {
  it("accepts the role, a higher tier of its family, or owner; never the operator by owner", () => {
    expect(holdsRole(new Set(["git.editor"]), "git.viewer")).toBe(true);
    expect(holdsRole(new Set(["git.editor"]), "git.editor")).toBe(true);
    expect(holdsRole(new Set(["git.editor"]), "git.admin")).toBe(false);
    expect(holdsRole(new Set(["registry.admin"]), "registry.developer")).toBe(true);
    expect(holdsRole(new Set(["script.editor"]), "git.viewer")).toBe(false);
    expect(holdsRole(new Set(["owner"]), "registry.admin")).toBe(true);
    expect(holdsRole(new Set(["owner"]), "operator")).toBe(false);
    expect(holdsRole(new Set(["operator"]), "script.viewer")).toBe(false);
    expect(holdsRole(new Set(["made.up"]), "made.up")).toBe(true);
    expect(holdsRole(new Set(), "made.up")).toBe(false);
  });
});

describe("the catalog", () => {
  it("has unique names, families from the names, and only the operator ungrantable", () => {
    expect(new Set(roleCatalog.map((r) => r.name)).size).toBe(roleCatalog.length);
    for (const role of roleCatalog) expect(role.name.startsWith(role.family)).toBe(true);
    expect(roleCatalog.filter((r) => !r.grantable).map((r) => r.name)).toEqual(["operator"]);
  });

  it("names in its doc comment table exactly the roles of the data structure", async () => {
    const source = await readFile(join(here, "roles.ts"), "utf8");
    const documented = [...source.matchAll(/^ \* \| `([a-z.]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual(roleCatalog.map((r) => r.name));
  });

  it("renders as a Markdown table for the README", () => {
    const table = roleCatalogMarkdown().split("\n");
    expect(table[0]).toBe("| Role | Allows |");
    expect(table).toHaveLength(roleCatalog.length + 2);
    expect(table).toContain(`| \`secrets.admin\` | ${findRole("secrets.admin")!.allows} |`);
  });
});

describe("the README", () => {
  it("shows the role catalog as it is", async () => {
    const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(roleCatalogMarkdown().trim());
  });
});
