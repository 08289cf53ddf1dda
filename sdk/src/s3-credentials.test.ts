import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deriveS3SecretAccessKey } from "../../server/src/auth/s3-secret.js";
import { s3Credentials } from "./s3-credentials.js";

describe("s3Credentials", () => {
  it("derives the same secret access key as the server, from the API key's secret alone", async () => {
    const secret = "dk_" + "A".repeat(43);
    const credentials = await s3Credentials("0b7c5e0e-0000-4000-8000-000000000001", secret);
    expect(credentials.accessKeyId).toBe("0b7c5e0e-0000-4000-8000-000000000001");
    expect(credentials.secretAccessKey).toBe(deriveS3SecretAccessKey(secret));
    expect(credentials.secretAccessKey).toBe(createHmac("sha256", secret).update("platform-s3-v1").digest("base64url"));
  });
});
