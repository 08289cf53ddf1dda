import { createHmac, timingSafeEqual } from "node:crypto";
import { blobKeyToUrlPath } from "./blob-key.js";

/** Where signed downloads are served on the api plane; the object's key follows. */
export const BLOB_ROUTE_PREFIX = "/v1/blobs/";

/** How long a download link works: the lifetime S3 consoles give pre-signed links by default. */
export const DOWNLOAD_LINK_TTL_MS = 15 * 60_000;

/** What a link fixes besides the object: the response's Content-Type and download file name. */
export interface BlobLinkOptions {
  /** Content-Type of the response; empty means the stored one. */
  readonly contentType?: string;
  /** File name the browser saves under; empty means the key's last segment. */
  readonly fileName?: string;
}

export type BlobLinkCheck =
  | { readonly ok: true; readonly expiresAt: number; readonly contentType: string; readonly fileName: string }
  | { readonly ok: false; readonly reason: "unsigned" | "invalid" | "expired" };

export interface BlobUrlSigner {
  /** An absolute URL that lets whoever holds it GET the object, with no credentials, until it expires. */
  sign(key: string, options?: BlobLinkOptions): string;
  /** Checks the query of a request for `key`: every signed part unchanged and not expired. */
  verify(key: string, query: URLSearchParams): BlobLinkCheck;
}

export interface BlobUrlSignerOptions {
  /**
   * The links' HMAC key, derived from the server's secret (`box.deriveKey(DOWNLOAD_LINK_KEY_PURPOSE)`):
   * every process on one database has the same, so any of them serves a link.
   */
  readonly signingKey: Uint8Array;
  /** Base URL of the api plane as clients reach it; read at each signature (the listener's port is known late). */
  readonly baseUrl: () => string;
  readonly ttlMs?: number;
  readonly now?: () => number;
}

/** The purpose the links' key is derived from the server's secret for. */
export const DOWNLOAD_LINK_KEY_PURPOSE = "platform blob download links v1";

/**
 * Pre-signed download links, as object stores make them: the key, the expiry, the response's type
 * and file name, and an HMAC-SHA256 over all of them with a key derived from the server's secret.
 * Changing any part, or signing with another secret, makes the link invalid; a valid one works
 * until `expires` and cannot be revoked earlier, which is why its lifetime is short.
 */
export function createBlobUrlSigner(options: BlobUrlSignerOptions): BlobUrlSigner {
  const key = Buffer.from(options.signingKey);
  const ttlMs = options.ttlMs ?? DOWNLOAD_LINK_TTL_MS;
  const now = options.now ?? Date.now;
  // JSON of the parts is unambiguous whatever characters they hold: no two links sign the same text.
  const mac = (objectKey: string, expires: string, contentType: string, fileName: string) =>
    createHmac("sha256", key)
      .update(JSON.stringify([objectKey, expires, contentType, fileName]))
      .digest();

  return {
    sign(objectKey, link = {}) {
      const expires = String(now() + ttlMs);
      const contentType = link.contentType ?? "";
      const fileName = link.fileName ?? "";
      const query = new URLSearchParams({ expires });
      if (contentType !== "") query.set("type", contentType);
      if (fileName !== "") query.set("name", fileName);
      query.set("signature", mac(objectKey, expires, contentType, fileName).toString("base64url"));
      return `${options.baseUrl().replace(/\/+$/, "")}${BLOB_ROUTE_PREFIX}${blobKeyToUrlPath(objectKey)}?${query}`;
    },

    verify(objectKey, query) {
      const signature = query.get("signature");
      const expires = query.get("expires");
      if (!signature || !expires) return { ok: false, reason: "unsigned" };
      const contentType = query.get("type") ?? "";
      const fileName = query.get("name") ?? "";
      const given = /^[A-Za-z0-9_-]{43}$/.test(signature) ? Buffer.from(signature, "base64url") : undefined;
      const expected = mac(objectKey, expires, contentType, fileName);
      if (
        !given ||
        given.length !== expected.length ||
        !timingSafeEqual(given, expected) ||
        !/^[0-9]{1,15}$/.test(expires)
      ) {
        return { ok: false, reason: "invalid" };
      }
      const expiresAt = Number(expires);
      if (now() > expiresAt) return { ok: false, reason: "expired" };
      return { ok: true, expiresAt, contentType, fileName };
    },
  };
}
