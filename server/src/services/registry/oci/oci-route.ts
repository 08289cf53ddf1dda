import type { NodeRequest, NodeResponse } from "../../../transport/plane-handler.js";
import type { RegistryCaller } from "../access/registry-caller.js";

/** What a caller may do on a repository, each implying the ones before it (delete is separate). */
export type RepositoryAction = "pull" | "push" | "delete";

/** The repository a /v2/<name>/... request names, resolved and authorized by the router. */
export interface OciRepositoryTarget {
  readonly orgId: string;
  readonly orgName: string;
  /** The name after the organization (`app`, `team/app`). */
  readonly name: string;
  /** `<org>/<name>`, as the wire writes it. */
  readonly fullName: string;
  /** The repository's row id; undefined until its first push creates it (only push routes see that). */
  readonly repositoryId: string | undefined;
}

/** One /v2 request after routing, naming and authorization. */
export interface OciRequest {
  readonly req: NodeRequest;
  readonly res: NodeResponse;
  readonly target: OciRepositoryTarget;
  readonly caller: RegistryCaller;
  /** The path after `/v2/<name>/`, split by the route (`manifests/<reference>` → { reference }). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** A /v2 route's handler: writes the whole response, or throws an OciError. */
export type OciRouteHandler = (request: OciRequest) => Promise<void>;
