import { describe, expect, it } from "vitest";
import { parseRepositoryName } from "./repositories.js";

describe("parseRepositoryName", () => {
  it("splits the organization from the repository path", () => {
    expect(parseRepositoryName("acme/app")).toEqual({ orgName: "acme", name: "app" });
    expect(parseRepositoryName("acme/team/app")).toEqual({ orgName: "acme", name: "team/app" });
    expect(parseRepositoryName("acme-1/a.b__c-d/e_f")).toEqual({ orgName: "acme-1", name: "a.b__c-d/e_f" });
  });

  it.each([
    "acme",
    "acme/App",
    "acme//app",
    "acme/app/",
    "/acme/app",
    "acme/-app",
    "acme/a..b",
    `a/${"b".repeat(260)}`,
  ])("refuses %s as NAME_INVALID", (name) => {
    expect(() => parseRepositoryName(name)).toThrow(expect.objectContaining({ code: "NAME_INVALID" }));
  });
});
