import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { NodeRequest, NodeResponse } from "../../transport/plane-handler.js";
import { launchGit, type LaunchedGit } from "./launcher/launch-git.js";

export type GitService = "git-upload-pack" | "git-receive-pack";

/** pkt-line framing: four hex digits of the total length, then the payload. */
function pktLine(payload: string): string {
  return (payload.length + 4).toString(16).padStart(4, "0") + payload;
}

/** `Git-Protocol` from the client, which selects protocol v2; only the documented `version=N` form is passed on. */
function wireEnvironment(req: NodeRequest): Record<string, string> {
  const protocol = req.headers["git-protocol"];
  return typeof protocol === "string" && /^version=[0-9]$/.test(protocol) ? { GIT_PROTOCOL: protocol } : {};
}

const noCache = { "cache-control": "no-cache, max-age=0, must-revalidate", expires: "Fri, 01 Jan 1980 00:00:00 GMT" };

/**
 * Protocol v2's first answer to a fetch is upload-pack's capabilities, which list no refs: they
 * change only with the repository's configuration (set once, at its creation) and the git
 * version. Kept per repository, so a fetch starts no process for them after the first.
 */
const v2Capabilities = new Map<string, Buffer>();
const MAX_KEPT_CAPABILITIES = 10_000;

async function uploadPackCapabilities(gitDir: string, env: Record<string, string>): Promise<Buffer | undefined> {
  const kept = v2Capabilities.get(gitDir);
  if (kept) return kept;
  const git = await launchGit({
    args: ["upload-pack", "--stateless-rpc", "--advertise-refs", gitDir],
    env,
    stdio: [false, true, false],
  }).catch(() => undefined);
  if (!git) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of git.stdout!) chunks.push(chunk as Buffer);
  if ((await git.closed) !== 0) return undefined;
  const answer = Buffer.concat(chunks);
  if (v2Capabilities.size >= MAX_KEPT_CAPABILITIES) v2Capabilities.clear();
  v2Capabilities.set(gitDir, answer);
  return answer;
}

/** `GET info/refs?service=`: the ref advertisement, streamed from git. */
export async function serveInfoRefs(
  req: NodeRequest,
  res: NodeResponse,
  gitDir: string,
  service: GitService,
): Promise<void> {
  const env = wireEnvironment(req);
  if (service === "git-upload-pack" && env.GIT_PROTOCOL === "version=2") {
    const capabilities = await uploadPackCapabilities(gitDir, env);
    if (capabilities) {
      res.writeHead(200, { "content-type": `application/x-${service}-advertisement`, ...noCache });
      return void res.end(capabilities);
    }
  }
  const git = await launchGit({
    args: [service.slice(4), "--stateless-rpc", "--advertise-refs", gitDir],
    env,
    stdio: [false, true, false],
  });
  res.writeHead(200, { "content-type": `application/x-${service}-advertisement`, ...noCache });
  // Protocol v2 starts with its own capability advertisement; v0/v1 need the service header.
  if (env.GIT_PROTOCOL !== "version=2") (res as ServerResponse).write(pktLine(`# service=${service}\n`) + "0000");
  await finish(git, res);
}

/**
 * `POST git-upload-pack` / `git-receive-pack`: the request streamed in (gunzipped when sent so), the
 * result streamed out. `setup` adds `-c` pairs and variables (the push check of receive-pack).
 */
export async function serveRpc(
  req: NodeRequest,
  res: NodeResponse,
  gitDir: string,
  service: GitService,
  setup: {
    readonly config?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
    /** Runs once git has exited, before the response ends: a client that sees the end sees its effects. */
    readonly afterExit?: () => Promise<void>;
  } = {},
): Promise<void> {
  const config = (setup.config ?? []).flatMap((pair) => ["-c", pair]);
  const git = await launchGit({
    args: [...config, service.slice(4), "--stateless-rpc", gitDir],
    env: { ...setup.env, ...wireEnvironment(req) },
    stdio: [true, true, false],
  });
  res.writeHead(200, { "content-type": `application/x-${service}-result`, ...noCache });
  const gzipped = req.headers["content-encoding"] === "gzip";
  // Both request kinds are readable streams; the union type of the two does not say so.
  const body = req as IncomingMessage;
  const stdin = git.stdin!;
  const input = (gzipped ? pipeline(body, createGunzip(), stdin) : pipeline(body, stdin)).catch(() => git.kill());
  await Promise.all([input, finish(git, res, setup.afterExit)]);
}

async function finish(git: LaunchedGit, response: NodeResponse, afterExit?: () => Promise<void>): Promise<void> {
  const res = response as ServerResponse;
  res.on("close", () => git.kill());
  try {
    for await (const chunk of git.stdout!) {
      if (!res.write(chunk as Buffer)) await new Promise((resolve) => res.once("drain", resolve));
    }
  } catch {
    // A broken stream from git ends the response like a failed git: the client sees it cut short.
    return void res.destroy();
  }
  await git.closed;
  try {
    await afterExit?.();
  } finally {
    res.end();
  }
}
