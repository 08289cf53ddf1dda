import { describe, expect, it } from "vitest";
import type { OciError } from "../oci/oci-error.js";
import { assertMayDo, mayDo, type RepositoryFacts } from "./registry-access.js";
import type { RegistryCaller } from "./registry-caller.js";

const repo: RepositoryFacts = { orgId: "o1", fullName: "acme/app", exists: true, public: false };
const key = (roles: string[], orgId = "o1"): RegistryCaller => ({
  kind: "key",
  orgId,
  orgName: "acme",
  keyId: "k",
  roles: new Set(roles),
});

function refusal(caller: RegistryCaller, facts: RepositoryFacts, action: "pull" | "push" | "delete"): string {
  try {
    assertMayDo(caller, facts, action);
    return "allowed";
  } catch (error) {
    return (error as OciError).code;
  }
}

describe("registry access", () => {
  it("grants each action by role in the repository's own organization", () => {
    expect(mayDo(key(["registry.reader"]), repo, "pull")).toBe(true);
    expect(mayDo(key(["registry.reader"]), repo, "push")).toBe(false);
    expect(mayDo(key(["registry.developer"]), repo, "push")).toBe(true);
    expect(mayDo(key(["registry.developer"]), repo, "delete")).toBe(true);
    expect(mayDo(key(["owner"]), repo, "delete")).toBe(true);
    expect(mayDo(key(["owner"], "o2"), repo, "pull")).toBe(false);
  });

  it("lets anyone pull a public repository, and nothing more", () => {
    const open = { ...repo, public: true };
    expect(mayDo({ kind: "anonymous" }, open, "pull")).toBe(true);
    expect(mayDo({ kind: "anonymous" }, open, "push")).toBe(false);
    expect(mayDo(key([], "o2"), open, "pull")).toBe(true);
  });

  it("grants a token's scopes only", () => {
    const token: RegistryCaller = { ...key(["owner"]), tokenScopes: new Map([["acme/app", new Set(["pull"])]]) };
    expect(mayDo(token, repo, "pull")).toBe(true);
    expect(mayDo(token, repo, "push")).toBe(false);
    expect(mayDo(token, { ...repo, fullName: "acme/other" }, "pull")).toBe(false);
  });

  it("refuses with the answer that reveals nothing", () => {
    expect(refusal({ kind: "anonymous" }, repo, "pull")).toBe("UNAUTHORIZED");
    expect(refusal(key(["owner"], "o2"), repo, "pull")).toBe("NAME_UNKNOWN");
    expect(refusal(key(["owner"], "o2"), { ...repo, orgId: undefined, exists: false }, "push")).toBe("NAME_UNKNOWN");
    expect(refusal(key(["registry.reader"]), repo, "push")).toBe("DENIED");
    expect(refusal(key(["registry.reader"]), repo, "pull")).toBe("allowed");
  });
});
