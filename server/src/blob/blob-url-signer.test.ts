import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createBlobUrlSigner, DOWNLOAD_LINK_TTL_MS, type BlobUrlSigner } from "./blob-url-signer.js";

const signingKey = new Uint8Array(randomBytes(32));
const clock = { ms: 1_700_000_000_000 };
const signer = createBlobUrlSigner({ signingKey, baseUrl: () => "https://api.example.com/", now: () => clock.ms });

function parts(url: string): { key: string; query: URLSearchParams } {
  const parsed = new URL(url);
  return {
    key: parsed.pathname.slice("/v1/blobs/".length).split("/").map(decodeURIComponent).join("/"),
    query: parsed.searchParams,
  };
}

function check(verifier: BlobUrlSigner, url: string) {
  const { key, query } = parts(url);
  return verifier.verify(key, query);
}

describe("download links", () => {
  it("sign the key, the expiry, the type and the file name into a URL under the base", () => {
    clock.ms = 1_700_000_000_000;
    const url = signer.sign("threads/t/artifacts/a b/ré.txt", {
      contentType: "text/plain; charset=utf-8",
      fileName: "ré.txt",
    });
    expect(url.startsWith("https://api.example.com/v1/blobs/threads/t/artifacts/a%20b/r%C3%A9.txt?")).toBe(true);
    const { query } = parts(url);
    expect(query.get("expires")).toBe(String(clock.ms + DOWNLOAD_LINK_TTL_MS));
    expect(query.get("type")).toBe("text/plain; charset=utf-8");
    expect(query.get("name")).toBe("ré.txt");
    expect(query.get("signature")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(check(signer, url)).toEqual({
      ok: true,
      expiresAt: clock.ms + DOWNLOAD_LINK_TTL_MS,
      contentType: "text/plain; charset=utf-8",
      fileName: "ré.txt",
    });
  });

  it("work until they expire, and not a millisecond after", () => {
    clock.ms = 1_700_000_000_000;
    const url = signer.sign("k/v");
    clock.ms += DOWNLOAD_LINK_TTL_MS;
    expect(check(signer, url)).toMatchObject({ ok: true, contentType: "", fileName: "" });
    clock.ms += 1;
    expect(check(signer, url)).toEqual({ ok: false, reason: "expired" });
  });

  it("are refused when any signed part changes", () => {
    clock.ms = 1_700_000_000_000;
    const url = signer.sign("threads/t/artifacts/x.txt", { contentType: "text/plain", fileName: "x.txt" });
    const { key, query } = parts(url);
    const changed = (name: string, value: string) => {
      const copy = new URLSearchParams(query);
      copy.set(name, value);
      return signer.verify(key, copy);
    };
    expect(signer.verify("threads/t/artifacts/y.txt", query)).toEqual({ ok: false, reason: "invalid" });
    expect(changed("expires", String(Number(query.get("expires")) + 3_600_000))).toEqual({
      ok: false,
      reason: "invalid",
    });
    expect(changed("type", "text/html")).toEqual({ ok: false, reason: "invalid" });
    expect(changed("name", "x.exe")).toEqual({ ok: false, reason: "invalid" });
    const signature = query.get("signature")!;
    // The first character: all six of its bits are signature bits (the last one's lowest two are padding).
    expect(changed("signature", `${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`)).toEqual({
      ok: false,
      reason: "invalid",
    });
    expect(changed("signature", "short")).toEqual({ ok: false, reason: "invalid" });
    const dropped = new URLSearchParams(query);
    dropped.delete("type");
    expect(signer.verify(key, dropped)).toEqual({ ok: false, reason: "invalid" });
  });

  it("are refused without a signature, and when another secret key signed them", () => {
    clock.ms = 1_700_000_000_000;
    const url = signer.sign("k/v");
    const { key, query } = parts(url);
    query.delete("signature");
    expect(signer.verify(key, query)).toEqual({ ok: false, reason: "unsigned" });
    expect(signer.verify(key, new URLSearchParams())).toEqual({ ok: false, reason: "unsigned" });
    const other = createBlobUrlSigner({
      signingKey: new Uint8Array(randomBytes(32)),
      baseUrl: () => "https://api.example.com",
      now: () => clock.ms,
    });
    expect(check(other, url)).toEqual({ ok: false, reason: "invalid" });
    // The same secret, in another process: the link works there too.
    const sibling = createBlobUrlSigner({ signingKey, baseUrl: () => "http://elsewhere:9", now: () => clock.ms });
    expect(check(sibling, url)).toMatchObject({ ok: true });
  });
});
