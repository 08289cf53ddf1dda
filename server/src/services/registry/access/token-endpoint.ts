import type { NodeRequest, NodeResponse } from "../../../transport/plane-handler.js";
import { resolveRepository } from "../content/repositories.js";
import { OciError, ociErrorBody } from "../oci/oci-error.js";
import { answer, readBody } from "../oci/oci-response.js";
import type { RepositoryAction } from "../oci/oci-route.js";
import { identifyCaller, mayDo, type RegistryAccessOptions } from "./registry-access.js";
import type { RegistryCaller } from "./registry-caller.js";

const actions: readonly RepositoryAction[] = ["pull", "push", "delete"];
const MAX_FORM_BYTES = 16 * 1024;
const MAX_SCOPES = 32;

/**
 * The token endpoint of the token flow (`GET /token?service=&scope=...`, or `POST /token` with an
 * OAuth2 password grant form): the caller authenticates with HTTP Basic (the API key as the
 * password) or not at all, and gets a short-lived token granting, of each requested scope, only the
 * actions it may do. Nothing is refused for lack of rights: the token simply grants less.
 */
export function createTokenEndpoint(options: RegistryAccessOptions) {
  return async function serveToken(req: NodeRequest, res: NodeResponse): Promise<void> {
    try {
      const method = (req.method ?? "GET").toUpperCase();
      const url = new URL(req.url ?? "/", "http://registry");
      let params = url.searchParams;
      let authorization = typeof req.headers.authorization === "string" ? req.headers.authorization : undefined;
      if (method === "POST") {
        const form = new URLSearchParams(
          Buffer.from(
            await readBody(
              req,
              MAX_FORM_BYTES,
              () => new OciError("SIZE_INVALID", "the form is too large", undefined, 413),
            ),
          ).toString(),
        );
        const grant = form.get("grant_type");
        if (grant !== "password") {
          return answer(
            res,
            400,
            { "content-type": "application/json" },
            {
              error: "unsupported_grant_type",
              error_description: "use grant_type=password with the API key as the password",
            },
          );
        }
        authorization = `Basic ${Buffer.from(`${form.get("username") ?? ""}:${form.get("password") ?? ""}`).toString("base64")}`;
        params = form;
      } else if (method !== "GET") {
        return answer(res, 405, { allow: "GET, POST", "content-type": "text/plain" }, "method not allowed\n");
      }
      const caller = await identifyCaller(options, authorization);
      if (caller.tokenScopes)
        throw new OciError(
          "UNAUTHORIZED",
          "a registry token cannot be exchanged for another: authenticate with an API key",
        );
      const access = await grantedAccess(
        options,
        caller,
        params
          .getAll("scope")
          .flatMap((s) => s.split(" "))
          .filter(Boolean),
      );
      const issued = options.tokens.issue(
        caller.kind === "key"
          ? { keyId: caller.keyId, orgId: caller.orgId, orgName: caller.orgName, access }
          : { access },
      );
      answer(
        res,
        200,
        { "content-type": "application/json", "cache-control": "no-store" },
        {
          token: issued.token,
          access_token: issued.token,
          expires_in: issued.expiresIn,
          issued_at: issued.issuedAt,
        },
      );
    } catch (error) {
      if (!(error instanceof OciError)) throw error;
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (error.code === "UNAUTHORIZED") headers["www-authenticate"] = 'Basic realm="registry"';
      answer(res, error.status, headers, ociErrorBody(error));
    }
  };
}

/** `repository:<name>:<actions>` scopes, each narrowed to what the caller may do; others are ignored. */
async function grantedAccess(
  options: RegistryAccessOptions,
  caller: RegistryCaller,
  scopes: readonly string[],
): Promise<Record<string, RepositoryAction[]>> {
  if (scopes.length > MAX_SCOPES)
    throw new OciError("DENIED", `at most ${MAX_SCOPES} scopes may be asked at once`, undefined, 400);
  const access: Record<string, RepositoryAction[]> = {};
  for (const scope of scopes) {
    const match = /^repository(?:\([a-z]+\))?:(.+):([a-z*,]+)$/.exec(scope);
    if (!match) continue;
    const requested = match[2]!.split(",");
    const wanted = actions.filter((a) => requested.includes(a) || requested.includes("*"));
    const resolved = await resolveRepository(options.db, match[1]!, options.repositories).catch(() => undefined);
    if (!resolved) continue;
    const granted = wanted.filter((action) => mayDo(caller, resolved.facts, action));
    if (granted.length > 0) access[match[1]!] = [...new Set([...(access[match[1]!] ?? []), ...granted])];
  }
  return access;
}
