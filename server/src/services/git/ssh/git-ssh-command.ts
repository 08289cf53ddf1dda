/** The two git services a client may ask for over SSH; nothing else runs on a channel. */
export type GitSshService = "git-upload-pack" | "git-receive-pack";

/** How an SSH client names a repository: by its id, or by its human address. */
export type GitRepoRef =
  | { readonly kind: "id"; readonly repoId: string }
  | { readonly kind: "name"; readonly orgSlug: string; readonly name: string };

export type GitSshCommand = { readonly service: GitSshService; readonly repo: GitRepoRef };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Slugs and names: no slashes, no leading dot, so a path can never climb out of its folder. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

/**
 * Reads an exec request (`git-upload-pack '/<repo_id>.git'`) into the service and repository it
 * names, or undefined when it is anything else. Clients quote the path with single quotes (OpenSSH
 * git), double quotes or not at all; the path may start with `/` (`ssh://` URLs) or not (scp form).
 */
export function parseGitSshCommand(command: string): GitSshCommand | undefined {
  const match = /^(git-upload-pack|git-receive-pack) +(.+)$/.exec(command.trim());
  if (!match) return undefined;
  const service = match[1] as GitSshService;
  const path = unquote(match[2]!);
  if (path === undefined) return undefined;
  const repo = parseRepoPath(path);
  return repo && { service, repo };
}

function unquote(text: string): string | undefined {
  const quote = text[0];
  if (quote === "'" || quote === '"') {
    if (text.length < 2 || text[text.length - 1] !== quote) return undefined;
    const inner = text.slice(1, -1);
    return inner.includes(quote) || inner.includes("\\") ? undefined : inner;
  }
  return /[\s'"\\]/.test(text) ? undefined : text;
}

/** `<repo_id>.git`, `/<repo_id>.git`, `<org_slug>/<name>.git`, each with or without the leading slash. */
export function parseRepoPath(path: string): GitRepoRef | undefined {
  const trimmed = path.startsWith("/") ? path.slice(1) : path;
  if (!trimmed.endsWith(".git")) return undefined;
  const parts = trimmed.slice(0, -".git".length).split("/");
  if (parts.length === 1 && UUID.test(parts[0]!)) return { kind: "id", repoId: parts[0]!.toLowerCase() };
  if (parts.length === 2 && SEGMENT.test(parts[0]!) && SEGMENT.test(parts[1]!)) {
    return { kind: "name", orgSlug: parts[0]!, name: parts[1]! };
  }
  return undefined;
}
