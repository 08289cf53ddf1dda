import type { NodeRequest as NodeRequest, NodeResponse as NodeResponse } from "../../../transport/plane-handler.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { parseRepoPath, type GitRepoRef } from "../ssh/git-ssh-command.js";
import { answerLfsBatch, LFS_MEDIA_TYPE, LfsError, OID, parseLfsBatchRequest } from "./lfs-batch.js";
import { storeLfsObject } from "./lfs-object-upload.js";

/** The repository a request may use, or why not (401 asks for credentials, 404 hides what is not ours). */
export type LfsAccess =
  | { readonly ok: true; readonly orgId: string; readonly repoId: string }
  | { readonly ok: false; readonly status: 401 | 403 | 404; readonly message: string };

export interface LfsDependencies {
  readonly blobs: BlobStore;
  /** The wire's check: Basic with the key as password; public repositories read anonymously. */
  authorize(authorization: string | undefined, repo: GitRepoRef, access: "read" | "write"): Promise<LfsAccess>;
  /** Adds a newly stored object's size to the repository's `lfs_bytes`. */
  addLfsBytes(repoId: string, bytes: number): Promise<void>;
  /** Largest object accepted on upload. */
  readonly maxObjectBytes: number;
  /** Largest batch request body read. */
  readonly maxBatchBytes?: number;
}

const ROUTE = /^\/(.+\.git)\/info\/lfs\/objects\/(batch|[0-9a-f]{64})$/;

/** `git-lfs/<org_id>/<repo_id>/<oid>`: one folder per repository, so deleting one drops its objects. */
export function lfsObjectKey(orgId: string, repoId: string, oid: string): string {
  return `git-lfs/${orgId}/${repoId}/${oid}`;
}

/**
 * Git LFS on the git listener: the batch API with the basic transfer adapter, and the object
 * endpoints its actions point at. Answers false when the path is not an LFS one, so the wire takes it.
 */
export function createLfsHandler(deps: LfsDependencies) {
  return async (request: NodeRequest, response: NodeResponse): Promise<boolean> => {
    const path = (request.url ?? "/").split("?")[0]!;
    const match = ROUTE.exec(path);
    if (!match) return false;
    try {
      const repo = parseRepoPath(match[1]!);
      if (!repo) throw new LfsError(404, "repository not found");
      await serve(request, response, repo, match[1]!, match[2]!, deps);
    } catch (error) {
      // A client that went away mid-upload left nothing stored; there is nobody to answer.
      if (request.destroyed && !request.complete) response.destroy();
      else if (error instanceof LfsError) sendError(response, error);
      else throw error;
    }
    return true;
  };
}

async function serve(
  request: NodeRequest,
  response: NodeResponse,
  repo: GitRepoRef,
  repoPath: string,
  target: string,
  deps: LfsDependencies,
): Promise<void> {
  const method = request.method ?? "GET";
  const upload = target === "batch" ? undefined : method === "PUT";
  const allowed = target === "batch" ? ["POST"] : ["GET", "HEAD", "PUT"];
  if (!allowed.includes(method)) {
    response.setHeader("Allow", allowed.join(", "));
    throw new LfsError(405, `method ${method} is not allowed here`);
  }
  if (target === "batch") {
    const body = parseLfsBatchRequest(await readJson(request, deps.maxBatchBytes ?? 1024 * 1024));
    const access = await check(deps, request, repo, body.operation === "upload" ? "write" : "read");
    const origin = `${request.headers["x-forwarded-proto"] === "https" ? "https" : "http"}://${request.headers.host ?? "localhost"}`;
    const authorization = request.headers.authorization;
    const answer = await answerLfsBatch(body, {
      storedSize: async (oid) => (await deps.blobs.stat(lfsObjectKey(access.orgId, access.repoId, oid)))?.size,
      objectHref: (oid) => `${origin}/${repoPath}/info/lfs/objects/${oid}`,
      ...(authorization ? { header: { Authorization: authorization } } : {}),
    });
    return sendJson(response, 200, answer);
  }
  const oid = target;
  if (!OID.test(oid)) throw new LfsError(404, "object does not exist");
  const access = await check(deps, request, repo, upload ? "write" : "read");
  const key = lfsObjectKey(access.orgId, access.repoId, oid);
  if (upload) {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > deps.maxObjectBytes) throw new LfsError(413, `object is larger than ${deps.maxObjectBytes} bytes`);
    const existed = (await deps.blobs.stat(key)) !== undefined;
    const size = await storeLfsObject(deps.blobs, key, oid, request, deps.maxObjectBytes);
    // Counted once per distinct object: a re-upload of what we hold adds nothing.
    if (!existed) await deps.addLfsBytes(access.repoId, size);
    response.writeHead(200, { "content-length": "0" }).end();
    return;
  }
  const blob = await deps.blobs.open(key);
  if (!blob) throw new LfsError(404, "object does not exist");
  response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(blob.size) });
  if (method === "HEAD") {
    await blob.close();
    response.end();
    return;
  }
  const stream = blob.read();
  stream.on("error", () => response.destroy());
  response.on("close", () => stream.destroy());
  stream.pipe(response);
}

async function check(
  deps: LfsDependencies,
  request: NodeRequest,
  repo: GitRepoRef,
  access: "read" | "write",
): Promise<{ orgId: string; repoId: string }> {
  const result = await deps.authorize(request.headers.authorization, repo, access);
  if (!result.ok) throw new LfsError(result.status, result.message);
  return result;
}

async function readJson(request: NodeRequest, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new LfsError(413, `batch request is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    throw new LfsError(422, "body must be JSON");
  }
}

function sendJson(response: NodeResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": LFS_MEDIA_TYPE, "content-length": Buffer.byteLength(text) });
  response.end(text);
}

function sendError(response: NodeResponse, error: LfsError): void {
  // git-lfs asks its credential helper for a password only when told how to authenticate.
  if (error.status === 401) response.setHeader("LFS-Authenticate", 'Basic realm="Git LFS"');
  if (response.headersSent) return void response.destroy();
  sendJson(response, error.status, { message: error.message });
}
