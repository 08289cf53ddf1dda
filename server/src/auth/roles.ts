import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";

/**
 * The role catalog: what an API key may do, granted as `<family>.<tier>` strings (Google IAM
 * style) through the IAM service. Roles of one family are tiers: a higher tier includes every
 * lower one (`script.editor` can do all that `script.viewer` can). `owner` includes every role of
 * its organization; `operator` belongs to the platform, not to an organization.
 *
 * | Role | Allows |
 * |---|---|
 * | `owner` | Everything in its organization, IAM included. Given to the key `admin create-org` prints. |
 * | `iam.admin` | The organization's API keys and grants (issue, rotate, revoke, grant), and reading the organization. It can grant any role, `owner` included, so treat it as owner-equivalent. |
 * | `script.viewer` | Read threads, steps, results, artifacts, tools and environment variables. |
 * | `script.editor` | Also create, cancel and resume threads; set, import and delete environment variables. |
 * | `secrets.viewer` | List secret metadata (names, types, times); never the values. |
 * | `secrets.admin` | Create, read in cleartext and delete secrets. |
 * | `compute.viewer` | Read apps, drafts, executions and MCP tool definitions. |
 * | `compute.editor` | Also create and configure apps; save, compile, test and publish drafts. |
 * | `builds.viewer` | Read builds and their logs. |
 * | `builds.editor` | Also start, cancel and upload builds and save build secrets. |
 * | `data.viewer` | Read actions and runs, pipelines, sources, ingest rules and jobs, vector engines; search and query vector tables; list and read buckets and objects (S3). |
 * | `data.editor` | Also run and enqueue actions and change pipelines, sources, credentials, ingest, engines; upsert and delete vectors and build vector indexes; create and delete buckets, write and delete objects (S3). |
 * | `vectordb.viewer` | Managed vector databases: GetService, GetServiceAccess, ListServices, cluster and backup reads. |
 * | `vectordb.admin` | Every managed vector database scope: allocate, delete, clusters, backups, policies. |
 * | `git.viewer` | Git: clone and fetch, browse (organization-wide or on one repository). |
 * | `git.editor` | Git: also push and pull requests. |
 * | `git.admin` | Git: also settings, visibility, branch protection and deletion. |
 * | `registry.reader` | Container registry: pull. |
 * | `registry.developer` | Container registry: push, pull and delete. |
 * | `registry.admin` | Container registry: also visibility, tag immutability and the storage quota. |
 * | `identity.viewer` | Identity pools: read pools, connections, users, tenants and memberships. |
 * | `identity.admin` | Identity pools: also create, change and delete them, their users, tenants and keys. |
 * | `operator` | Platform operator: creates organizations and manages the keys and grants of every organization. Held only by the operator key (`<data-dir>/operator.key`); cannot be granted through the API, and gives no access to any organization's data. |
 *
 * Names follow the contract where it names them (`git.viewer`, `vectordb.admin`,
 * `registry.developer`, `secrets.admin`, `script.editor`); the rest follow the same pattern.
 */

export interface RoleDefinition {
  readonly name: string;
  /** The part before the dot; `owner` and `operator` are families of their own. */
  readonly family: string;
  /** Rank within the family; a role includes every role of its family with a lower tier. */
  readonly tier: number;
  readonly allows: string;
  /** False for `operator`: no API call grants it. */
  readonly grantable: boolean;
}

const role = (name: string, tier: number, allows: string, grantable = true): RoleDefinition => ({
  name,
  family: roleFamily(name),
  tier,
  allows,
  grantable,
});

export const roleCatalog: readonly RoleDefinition[] = [
  role("owner", 0, "Everything in its organization, IAM included."),
  role(
    "iam.admin",
    0,
    "The organization's API keys and grants, and reading the organization; can grant any role, so owner-equivalent.",
  ),
  role("script.viewer", 0, "Read threads, steps, results, artifacts, tools and environment variables."),
  role("script.editor", 1, "Also create, cancel and resume threads; set, import and delete environment variables."),
  role("secrets.viewer", 0, "List secret metadata; never the values."),
  role("secrets.admin", 1, "Create, read in cleartext and delete secrets."),
  role("compute.viewer", 0, "Read apps, drafts, executions and MCP tool definitions."),
  role("compute.editor", 1, "Also create and configure apps; save, compile, test and publish drafts."),
  role("builds.viewer", 0, "Read builds and their logs."),
  role("builds.editor", 1, "Also start, cancel and upload builds and save build secrets."),
  role(
    "data.viewer",
    0,
    "Read actions, pipelines, sources, ingest and vector engines; search and query vector tables; read buckets and objects.",
  ),
  role(
    "data.editor",
    1,
    "Also run actions and change pipelines, sources, credentials, ingest and engines; write vector tables; write buckets and objects.",
  ),
  role(
    "vectordb.viewer",
    0,
    "Managed vector databases: GetService, GetServiceAccess, ListServices, cluster and backup reads.",
  ),
  role("vectordb.admin", 1, "Every managed vector database scope."),
  role("git.viewer", 0, "Git: clone, fetch and browse."),
  role("git.editor", 1, "Git: also push and pull requests."),
  role("git.admin", 2, "Git: also settings, visibility, branch protection and deletion."),
  role("registry.reader", 0, "Container registry: pull."),
  role("registry.developer", 1, "Container registry: push, pull and delete."),
  role("registry.admin", 2, "Container registry: also visibility, tag immutability and the storage quota."),
  role("identity.viewer", 0, "Identity pools: read pools, connections, users, tenants and memberships."),
  role("identity.admin", 1, "Identity pools: also create, change and delete them, their users, tenants and keys."),
  role(
    "operator",
    0,
    "Platform operator: creates organizations and manages every organization's keys and grants.",
    false,
  ),
];

export const ownerRole = "owner";
export const operatorRole = "operator";

const rolesByName = new Map(roleCatalog.map((r) => [r.name, r]));

/** The catalog entry of a role name, or undefined for a name the platform does not know. */
export function findRole(name: string): RoleDefinition | undefined {
  return rolesByName.get(name);
}

/** `git.editor` → `git`; a name without a dot is its own family. */
export function roleFamily(name: string): string {
  const dot = name.indexOf(".");
  return dot === -1 ? name : name.slice(0, dot);
}

/** The catalog as a Markdown table (role, allows), for the README. */
export function roleCatalogMarkdown(): string {
  return ["| Role | Allows |", "|---|---|", ...roleCatalog.map((r) => `| \`${r.name}\` | ${r.allows} |`)].join("\n");
}

/**
 * The least role each generated service asks for: `read` for methods marked
 * `idempotency_level = NO_SIDE_EFFECTS`, `write` for every other method. `operatorManaged` lets
 * the platform operator call every method of the service, for any organization.
 */
interface ServiceRoleRule {
  readonly read: string;
  readonly write: string;
  readonly operatorManaged?: boolean;
}

const data: ServiceRoleRule = { read: "data.viewer", write: "data.editor" };

export const serviceRoleRules: Readonly<Record<string, ServiceRoleRule>> = {
  "platform.script.v1.ScriptService": { read: "script.viewer", write: "script.editor" },
  "platform.compute.v1.ComputeService": { read: "compute.viewer", write: "compute.editor" },
  "platform.compute.v1.BuildService": { read: "builds.viewer", write: "builds.editor" },
  "platform.compute.v1.SecretService": { read: "secrets.viewer", write: "secrets.admin" },
  "platform.data.actions.v1.ActionsService": data,
  "platform.data.ingest.v1.IngestService": data,
  "platform.data.pipeline.v1.PipelineService": data,
  "platform.data.source.v1.SourceService": data,
  "platform.data.vector.v1.VectorService": data,
  "platform.data.vector.v1.VectorDataService": data,
  "platform.vectordb.v1.VectorDbService": { read: "vectordb.viewer", write: "vectordb.admin" },
  // Reading keys and grants is as sensitive as changing them: one tier, no viewer.
  "platform.iam.v1.IamService": { read: "iam.admin", write: "iam.admin", operatorManaged: true },
};

/** The roles of which a caller must hold at least one. */
export interface RequiredRole {
  readonly anyOf: readonly string[];
}

/** Methods where the generic rule is wrong, by `<service type name>.<method name>`. */
const requiredRoleOverrides: Readonly<Record<string, RequiredRole>> = {
  // Has no side effects but returns the credential in cleartext: reading it is administering it.
  "platform.compute.v1.SecretService.GetSecret": { anyOf: ["secrets.admin", ownerRole] },
  // New tenants are the platform's act, not an organization's.
  "platform.iam.v1.IamService.CreateOrganization": { anyOf: [operatorRole] },
};

/**
 * What calling a method needs, derived from the contract: the service's read role (or a higher
 * tier) for NO_SIDE_EFFECTS methods, its write role (or higher) otherwise, `owner` always, and
 * `operator` on operator-managed services; the override table wins where it has an entry.
 * Throws for a service with no rule, so a new service cannot be served without one.
 */
export function requiredRole(service: DescService, method: DescMethod): RequiredRole {
  const override = requiredRoleOverrides[`${service.typeName}.${method.name}`];
  if (override) return override;
  const rule = serviceRoleRules[service.typeName];
  if (!rule)
    throw new Error(`no role rule for ${service.typeName}: add one to serviceRoleRules in server/src/auth/roles.ts`);
  const least = method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS ? rule.read : rule.write;
  return { anyOf: [...rolesAtLeast(least), ownerRole, ...(rule.operatorManaged ? [operatorRole] : [])] };
}

/** The role and every higher tier of its family. */
function rolesAtLeast(name: string): string[] {
  const least = findRole(name);
  if (!least) throw new Error(`role rule names unknown role ${name}`);
  return roleCatalog.filter((r) => r.family === least.family && r.tier >= least.tier).map((r) => r.name);
}

/**
 * Whether held roles include `needed`: the role itself, a higher tier of its family, or `owner`
 * (which includes everything but the platform's `operator`). For planes that check one role
 * directly (git, registry) rather than through `requiredRole`.
 */
export function holdsRole(held: ReadonlySet<string>, needed: string): boolean {
  if (needed !== operatorRole && held.has(ownerRole)) return true;
  if (held.has(needed)) return true;
  const target = findRole(needed);
  if (!target) return false;
  return roleCatalog.some((r) => r.family === target.family && r.tier > target.tier && held.has(r.name));
}
