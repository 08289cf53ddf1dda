import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);

describe("artifact.write", () => {
  it("stores text as UTF-8 with a text content type by default", async () => {
    const context = testContext();
    expect(
      await registry.invoke("org", "artifact.write", { name: "reports/summary.md", content: "héllo" }, context),
    ).toEqual({ name: "reports/summary.md", sizeBytes: 6 });
    const stored = context.artifacts.get("reports/summary.md");
    expect(stored?.contentType).toBe("text/plain; charset=utf-8");
    expect(Buffer.from(stored?.bytes ?? []).toString("utf8")).toBe("héllo");
  });

  it("stores base64 content as bytes, standard or url-safe", async () => {
    const context = testContext();
    const bytes = Buffer.from([0, 255, 254, 1, 2]);
    await registry.invoke("org", "artifact.write", { name: "a.bin", contentBase64: bytes.toString("base64") }, context);
    await registry.invoke(
      "org",
      "artifact.write",
      { name: "b.png", contentType: "image/png", contentBase64: bytes.toString("base64url") },
      context,
    );
    expect(Buffer.from(context.artifacts.get("a.bin")?.bytes ?? [])).toEqual(bytes);
    expect(context.artifacts.get("a.bin")?.contentType).toBe("application/octet-stream");
    expect(Buffer.from(context.artifacts.get("b.png")?.bytes ?? [])).toEqual(bytes);
    expect(context.artifacts.get("b.png")?.contentType).toBe("image/png");
  });

  it.each([
    [{ name: "x" }, "give exactly one of content and contentBase64"],
    [{ name: "x", content: "a", contentBase64: "YQ==" }, "give exactly one of content and contentBase64"],
    [{ name: "x", contentBase64: "not base64!" }, "contentBase64 is not valid base64"],
    [{ name: "", content: "a" }, "name must not be empty"],
    [{ name: "/etc/passwd", content: "a" }, "must be relative"],
    [{ name: "a/../../b", content: "a" }, 'has an empty, "." or ".." segment'],
    [{ name: "a//b", content: "a" }, 'has an empty, "." or ".." segment'],
    [{ name: "a\\b", content: "a" }, "contains a control character or a backslash"],
    [{ name: "a\nb", content: "a" }, "contains a control character or a backslash"],
    [{ name: "n".repeat(513), content: "a" }, "is longer than 512 characters"],
  ])("refuses %j", async (input: JsonObject, message) => {
    expect(
      (await toolError(registry.invoke("org", "artifact.write", input, testContext()), "invalid_input")).message,
    ).toContain(message);
  });
});
