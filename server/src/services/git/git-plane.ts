import type { BlobStore } from "../../blob/blob-store.js";
import type { Logger } from "../../log/logger.js";
import type { NodeRequest, NodeResponse, NodeRequestHandler } from "../../transport/plane-handler.js";
import { assertGitRole, GitAccessError, identifyGitCaller, type GitAccessOptions } from "./git-access.js";
import { createCheckLogTail } from "./control/check-log-tail.js";
import { createGitControlPlane } from "./control/git-control-plane.js";
import type { CheckLogSignals } from "./collab/checks/check-log-signals.js";
import { writeAccessRefusal } from "./control/git-control-auth.js";
import { findRepositoryById, findRepositoryByName, repositoryGitDir, type RepositoryRow } from "./repository-store.js";
import { serveInfoRefs, serveRpc, type GitService } from "./smart-http.js";
import { refreshRepositorySize } from "./repository-accounting.js";
import { receivePackSetup } from "./push-policy/push-policy.js";
import { createGatewayLfsHandler } from "./lfs/gateway-lfs-handler.js";

export interface GitPlaneOptions extends GitAccessOptions {
  readonly dataDir: string;
  readonly logger: Logger;
  /** Where Git LFS objects are kept. */
  readonly blobs: BlobStore;
  /** Wakes live tails of check logs, across processes. */
  readonly checkSignals: CheckLogSignals;
}

/** `/{repo_id}.git/<rest>` or `/{org_slug}/{name}.git/<rest>`. */
const wirePath = /^\/(?:([^/]+)\/)?([^/]+)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

function text(res: NodeResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(body.endsWith("\n") ? body : `${body}\n`);
}

/** The git listener: the REST control plane under /api/v1, the smart HTTP wire and Git LFS. */
export function createGitPlane(options: GitPlaneOptions): NodeRequestHandler {
  const lfs = createGatewayLfsHandler(options);
  const serveWire = async (req: NodeRequest, res: NodeResponse, match: RegExpExecArray): Promise<void> => {
    const [, orgSlug, repoName, action] = match;
    const url = new URL(req.url ?? "/", "http://git");
    const service: GitService | undefined =
      action === "info/refs"
        ? ((url.searchParams.get("service") as GitService | null) ?? undefined)
        : (action as GitService);
    if (service !== "git-upload-pack" && service !== "git-receive-pack")
      return text(res, 403, "forbidden: only smart HTTP (service=git-upload-pack or git-receive-pack) is served");
    if ((action === "info/refs") !== (req.method === "GET"))
      return text(res, 405, "method not allowed", { allow: action === "info/refs" ? "GET" : "POST" });
    const caller = await identifyGitCaller(options, req.headers.authorization);
    const repo: RepositoryRow | undefined = orgSlug
      ? await findRepositoryByName(options.db, orgSlug, repoName!)
      : await findRepositoryById(options.db, repoName!);
    // Without a credential a missing repository asks for one, as a private one would: nothing is revealed.
    if (!repo) throw new GitAccessError(caller.kind === "anonymous" ? 401 : 404, "repository not found");
    await assertGitRole(options, caller, repo, service === "git-receive-pack" ? "git.editor" : "git.viewer");
    const gitDir = repositoryGitDir(options.dataDir, repo.orgId, repo.id);
    if (action === "info/refs") return serveInfoRefs(req, res, gitDir, service);
    if (service === "git-upload-pack") return serveRpc(req, res, gitDir, service);
    await serveRpc(req, res, gitDir, service, {
      ...(await receivePackSetup(options.db, repo)),
      afterExit: () => refreshRepositorySize(options.db, repo.id, gitDir),
    });
  };
  const serve = async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (await lfs(req, res)) return;
    const wire = wirePath.exec(path);
    if (wire) return serveWire(req, res, wire);
    text(res, 404, "not found");
  };
  const tail = createCheckLogTail(options);
  // The live tail of check logs, then the control plane's routes; every other path is the wire's
  // (or LFS's), or unknown.
  const control = createGitControlPlane(options).nodeHandler((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        if (!(error instanceof GitAccessError)) options.logger.error("git request failed", { error });
        res.destroy();
        return;
      }
      if (error instanceof GitAccessError) return writeAccessRefusal(res, error);
      options.logger.error("git request failed", { error });
      text(res, 500, "internal error");
    });
  });
  return (req, res) => {
    if (!tail.handle(req, res)) control(req, res);
  };
}
