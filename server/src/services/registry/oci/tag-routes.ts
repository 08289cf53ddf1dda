import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { existingRepository } from "../content/repositories.js";
import { registryTags } from "../registry-schema.js";
import { OciError } from "./oci-error.js";
import { answer } from "./oci-response.js";
import type { OciRouteHandler } from "./oci-route.js";

/** Tags a page holds when the client names no `n`, and at most. */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** Tags compare by their bytes, whatever the database's collation: pages never skip or repeat one. */
const byteOrder = sql`${registryTags.name} collate "C"`;

/** `GET /v2/<name>/tags/list?n=&last=`: tags in lexical order, a `Link` to the next page when more remain. */
export function createTagRoutes(db: Database): Record<"list", OciRouteHandler> {
  return {
    async list({ res, target, query }) {
      const repositoryId = existingRepository(target);
      const nText = query.get("n");
      const n = nText === null ? DEFAULT_PAGE : Number(nText);
      if (!Number.isInteger(n) || n < 0) throw new OciError("SIZE_INVALID", "n must be a non-negative integer");
      const limit = Math.min(n, MAX_PAGE);
      const last = query.get("last");
      const rows =
        limit === 0
          ? []
          : await db
              .select({ name: registryTags.name })
              .from(registryTags)
              .where(and(eq(registryTags.repositoryId, repositoryId), last ? sql`${byteOrder} > ${last}` : undefined))
              .orderBy(byteOrder)
              .limit(limit + 1);
      const names = rows.slice(0, limit).map((r) => r.name);
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (rows.length > limit) {
        const next = new URLSearchParams({ n: String(limit), last: names[names.length - 1]! });
        headers.link = `</v2/${target.fullName}/tags/list?${next}>; rel="next"`;
      }
      answer(res, 200, headers, { name: target.fullName, tags: names });
    },
  };
}
