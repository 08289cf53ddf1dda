import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseServeConfig } from "../../../config.js";
import { parseOAuthProviders } from "./oauth-provider-config.js";

describe("OAuth provider registrations", () => {
  const parse = (document: unknown) => () => parseOAuthProviders(JSON.stringify(document));
  const entry = {
    authorization_endpoint: "https://a.example/authorize",
    token_endpoint: "https://a.example/token",
    client_id: "id",
    client_secret: "very-secret",
    redirect_uris: ["https://app.example/cb"],
  };

  it("is read from --oauth-providers-file at start, a mistake stopping it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "oauth-providers-"));
    try {
      const file = join(dir, "providers.json");
      await writeFile(file, JSON.stringify({ notion: entry }));
      expect(parseServeConfig(["--oauth-providers-file", file], {}).oauthProviders.get("notion")).toMatchObject({
        clientId: "id",
      });
      expect(parseServeConfig([], { PLATFORM_OAUTH_PROVIDERS_FILE: file }).oauthProviders.size).toBe(1);
      expect(parseServeConfig([], {}).oauthProviders.size).toBe(0);
      await writeFile(file, JSON.stringify({ notion: { ...entry, client_id: 7 } }));
      expect(() => parseServeConfig(["--oauth-providers-file", file], {})).toThrow(ConfigError);
      expect(() => parseServeConfig(["--oauth-providers-file", file], {})).toThrow(
        /"notion".client_id must be a string/,
      );
      expect(() => parseServeConfig(["--oauth-providers-file", join(dir, "missing.json")], {})).toThrow(/cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("accepts either spelling of a provider and defaults to client_secret_basic", () => {
    const providers = parseOAuthProviders(JSON.stringify({ PROVIDER_GOOGLE_DRIVE: entry }));
    expect(providers.get("google_drive")).toMatchObject({ tokenEndpointAuthMethod: "client_secret_basic", scopes: [] });
  });

  it("names what is wrong and never repeats the secret", () => {
    const cases: [unknown, RegExp][] = [
      [[], /must be a JSON object/],
      [{ nope: entry }, /"nope" is not a provider name/],
      [{ amazon_s3: entry }, /PROVIDER_AMAZON_S3 does not connect with OAuth/],
      [{ box: entry, PROVIDER_BOX: entry }, /PROVIDER_BOX is configured twice/],
      [{ box: { ...entry, token_endpoint: undefined } }, /"box".token_endpoint is required/],
      [
        { box: { ...entry, client_secret: undefined } },
        /"box".client_secret is required with token_endpoint_auth_method client_secret_basic/,
      ],
      [{ box: { ...entry, redirect_uris: [] } }, /"box".redirect_uris must list at least one URI/],
      [{ box: { ...entry, redirect_uris: ["http://app.example/cb"] } }, /must be https \(http only for localhost\)/],
      [
        { box: { ...entry, token_endpoint_auth_method: "private_key_jwt" } },
        /"box".token_endpoint_auth_method must be one of/,
      ],
      [{ box: { ...entry, authorization_params: { state: "x" } } }, /may not set state/],
      [{ box: { ...entry, scopes: ["a b"] } }, /"box".scopes holds an invalid scope/],
      [{ box: { ...entry, clientSecret: "x" } }, /"box".clientSecret is not a known member/],
    ];
    for (const [document, message] of cases) {
      expect(parse(document)).toThrow(message);
      try {
        parse(document)();
      } catch (error) {
        expect((error as Error).message).not.toContain("very-secret");
      }
    }
    expect(
      parseOAuthProviders(
        JSON.stringify({ box: { ...entry, client_secret: undefined, token_endpoint_auth_method: "none" } }),
      ).get("box"),
    ).toMatchObject({ clientSecret: undefined });
  });
});
