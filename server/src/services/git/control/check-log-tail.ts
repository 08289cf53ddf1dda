import type { ServerResponse } from "node:http";
import type { Database } from "../../../db/database.js";
import type { Logger } from "../../../log/logger.js";
import type { NodeRequest, NodeResponse } from "../../../transport/plane-handler.js";
import type { CheckLogSignals } from "../collab/checks/check-log-signals.js";
import { createCheckStore } from "../collab/checks/check-store.js";
import { followCheckLog } from "../collab/checks/follow-check-log.js";
import { assertGitRole, GitAccessError, identifyGitCaller, type GitAccessOptions } from "../git-access.js";
import { findRepositoryById } from "../repository-store.js";
import { writeAccessRefusal } from "./git-control-auth.js";

const tailPath =
  /^\/api\/v1\/repos\/([^/]+)\/checks\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/logs$/i;
/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/** One SSE event: the chunk's offset as its id, each line of its text on its own `data:` line. */
export function checkLogEvent(offset: number, text: string): string {
  const lines = text.split(/\r\n|\r|\n/);
  // Text ending in a newline would add an empty last data line, which readers join back into it.
  return `id: ${offset}\n${lines.map((line) => `data: ${line}`).join("\n")}\n\n`;
}

/**
 * The live tail of a check's log (`GET .../checks/{check_id}/logs` with `Accept: text/event-stream`),
 * served outside the generated plane because its answer is a stream. Access is the plane's: a
 * key with git.viewer on the repository, another organization's repository not found.
 */
export function createCheckLogTail(
  options: GitAccessOptions & {
    readonly db: Database;
    readonly checkSignals: CheckLogSignals;
    readonly logger: Logger;
  },
) {
  const store = createCheckStore(options.db);

  async function serve(req: NodeRequest, response: NodeResponse, repoId: string, checkId: string): Promise<void> {
    // Both response kinds are writable streams; the union type of the two does not say so.
    const res = response as ServerResponse;
    const caller = await identifyGitCaller(options, req.headers.authorization);
    if (caller.kind === "anonymous") throw new GitAccessError(401, "send an API key over HTTP Basic or Bearer");
    const repo = await findRepositoryById(options.db, repoId);
    if (!repo) throw new GitAccessError(404, `repository ${repoId.slice(0, 64)}`);
    await assertGitRole(options, caller, repo, "git.viewer");
    if (!(await store.get(repo.orgId, repo.id, checkId))) throw new GitAccessError(404, `check ${checkId}`);
    const lastEventId = req.headers["last-event-id"];
    const after = typeof lastEventId === "string" && /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId) : -1;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    try {
      for await (const chunk of followCheckLog({
        store,
        signals: options.checkSignals,
        orgId: repo.orgId,
        repoId: repo.id,
        checkId,
        afterOffset: after,
        abort: abort.signal,
      })) {
        if (!res.write(checkLogEvent(chunk.offset, chunk.text)))
          await new Promise((resolve) => res.once("drain", resolve));
      }
    } finally {
      clearInterval(keepalive);
    }
    res.end();
  }

  return {
    /** Serves the request when it asks for the live tail; false leaves it to the plane. */
    handle(req: NodeRequest, res: NodeResponse): boolean {
      const accept = req.headers.accept ?? "";
      if (req.method !== "GET" || !accept.includes("text/event-stream")) return false;
      const match = tailPath.exec((req.url ?? "/").split("?")[0]!);
      if (!match) return false;
      serve(req, res, match[1]!, match[2]!).catch((error: unknown) => {
        if (res.headersSent) return void res.end();
        if (error instanceof GitAccessError) return writeAccessRefusal(res, error);
        options.logger.error("check log tail failed", { error });
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end("internal error\n");
      });
      return true;
    },
  };
}
