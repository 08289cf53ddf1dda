import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GrantError } from "./grant-error.js";

describe("GrantError", () => {
  it("is both a GrantError and a ConnectError with the status code of its OAuth error", () => {
    const error = new GrantError("invalid_grant", "invalid e-mail or password");
    expect(error).toBeInstanceOf(GrantError);
    expect(error).toBeInstanceOf(ConnectError);
    expect([error.code, error.oauthError, error.rawMessage]).toEqual([
      Code.Unauthenticated,
      "invalid_grant",
      "invalid e-mail or password",
    ]);
    expect(new GrantError("access_denied", "banned").code).toBe(Code.PermissionDenied);
  });
});

describe("GrantError instanceof", () => {
  it("is false for a plain ConnectError", () => {
    expect(new ConnectError("x", Code.Unauthenticated)).not.toBeInstanceOf(GrantError);
  });
});
