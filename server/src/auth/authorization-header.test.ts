import { describe, expect, it } from "vitest";
import { AuthorizationHeaderError, readAuthorization } from "./authorization-header.js";

const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;

describe("readAuthorization", () => {
  it("takes the password of Basic credentials, whatever the username, and a Bearer token as it is", () => {
    expect(readAuthorization(basic("anyone:dk_secret"))).toEqual({ scheme: "basic", secret: "dk_secret" });
    expect(readAuthorization(basic(":dk_a:b"))).toEqual({ scheme: "basic", secret: "dk_a:b" });
    expect(readAuthorization("bearer  dk_token ")).toEqual({ scheme: "bearer", secret: "dk_token" });
  });

  it("refuses malformed headers, other schemes and Basic credentials without a colon", () => {
    for (const header of ["dk_token", "Digest abc", basic("no-colon"), "Bearer a b"]) {
      expect(() => readAuthorization(header), header).toThrow(AuthorizationHeaderError);
    }
  });
});
