import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmailTokens, EMAIL_TOKEN_TTL_MS, type EmailTokens } from "./email-tokens.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";

let fixture: IdentityTestFixture;
let clock = Date.now();
let tokens: EmailTokens;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  tokens = createEmailTokens(fixture.database.db, { now: () => clock });
});
afterAll(() => fixture.close());

const userId = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
const refused = { code: Code.Unauthenticated };

describe(`e-mail tokens (${engineName})`, () => {
  it("consumes a token once, for its purpose only", async () => {
    const { ref } = await fixture.newPool();
    const token = await tokens.issue(ref, userId, "verify");
    await expect(tokens.consume(ref, token, "reset")).rejects.toMatchObject(refused);
    expect(await tokens.consume(ref, token, "verify")).toEqual({ userId });
    await expect(tokens.consume(ref, token, "verify")).rejects.toMatchObject(refused);
  });

  it("lets a reset link live 30 minutes and a verification link 3 days", async () => {
    const { ref } = await fixture.newPool();
    const reset = await tokens.issue(ref, userId, "reset");
    const verify = await tokens.issue(ref, userId, "verify");
    clock += EMAIL_TOKEN_TTL_MS.reset;
    await expect(tokens.consume(ref, reset, "reset")).rejects.toMatchObject(refused);
    clock += EMAIL_TOKEN_TTL_MS.verify - EMAIL_TOKEN_TTL_MS.reset - 1;
    expect(await tokens.consume(ref, verify, "verify")).toEqual({ userId });
  });

  it("voids the earlier link when a new one is sent, and keeps pools apart", async () => {
    const { ref } = await fixture.newPool();
    const { ref: other } = await fixture.newPool();
    const first = await tokens.issue(ref, userId, "reset");
    const second = await tokens.issue(ref, userId, "reset");
    await expect(tokens.consume(ref, first, "reset")).rejects.toMatchObject(refused);
    await expect(tokens.consume(other, second, "reset")).rejects.toMatchObject(refused);
    expect(await tokens.consume(ref, second, "reset")).toEqual({ userId });
  });

  it("lets only one of two simultaneous clicks through", async () => {
    const { ref } = await fixture.newPool();
    const token = await tokens.issue(ref, userId, "invite");
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => tokens.consume(ref, token, "invite")));
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
  });
});
