import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  ApiKeySchema,
  ApiKeyState,
  IssuedApiKeySchema,
  OrganizationSchema,
  PermissionSchema,
} from "../../../../gen/platform/iam/v1/iam_pb.js";
import type { ApiKey, Organization, Permission } from "../../../../gen/platform/iam/v1/iam_pb.js";
import type { IamServiceImplementation } from "../../../../gen/platform/iam/v1/iam_service_server.js";
import { principalOf, type Principal } from "../../auth/principal.js";
import { findRole, operatorRole, roleCatalog, roleFamily } from "../../auth/roles.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import {
  createIamStore,
  type ApiKeyRow,
  type ApiKeyStateFilter,
  type IssuedKey,
  type OrganizationRow,
  type PageRequest,
  type PermissionRow,
} from "./iam-store.js";

export interface IamServiceOptions {
  readonly db: Database;
  /** Seals each issued or rotated key's S3 secret (s3-secret.ts); absent, it is filled on the key's first use. */
  readonly box?: SecretBox;
}

/**
 * The IAM service. Tenancy: every `{org_id}` must be the caller's own organization, else
 * NOT_FOUND (the same answer as for an organization that does not exist); only the platform
 * operator reaches other organizations. Which role each method needs is the auth interceptor's
 * business (roles.ts); these handlers enforce the tenancy and the contract's validation.
 */
export function createIamService({ db, box }: IamServiceOptions): IamServiceImplementation {
  const store = createIamStore(db, { box });

  /** The organization named by a request, if the caller may see it. */
  async function visibleOrganization(context: HandlerContext, orgId: string): Promise<OrganizationRow> {
    requireUuid(orgId, "org_id");
    const principal = principalOf(context);
    const org = isOperator(principal) || orgId === principal.orgId ? await store.getOrganization(orgId) : undefined;
    if (!org) throw new ConnectError(`organization "${orgId}" not found`, Code.NotFound);
    return org;
  }

  return {
    async createOrganization(request, context) {
      if (!isOperator(principalOf(context)))
        throw new ConnectError("creating organizations needs the operator role", Code.PermissionDenied);
      if (!organizationNamePattern.test(request.name)) {
        throw invalid(
          `name must be 3 to 63 characters of lower-case letters, digits and hyphens, got "${request.name}"`,
        );
      }
      if (request.displayName.length > 200) throw invalid("display_name must be at most 200 characters");
      return organizationMessage(
        await store.createOrganization({ name: request.name, displayName: request.displayName || request.name }),
      );
    },

    async getOrganization(request, context) {
      return organizationMessage(await visibleOrganization(context, request.orgId));
    },

    async listOrganizations(request, context) {
      const principal = principalOf(context);
      const page = await store.listOrganizations(
        pageRequest(request, 50, 200),
        isOperator(principal) ? undefined : principal.orgId,
      );
      return { organizations: page.items.map(organizationMessage), nextPageToken: page.nextPageToken };
    },

    async createApiKey(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      const name = request.name.trim();
      if (name === "" || name.length > 100) throw invalid("name is required, at most 100 characters");
      const roles = validRoles(request.roles, "roles", 0);
      const expiresAt = Number(request.expiresAt);
      if (expiresAt < 0 || (expiresAt !== 0 && expiresAt <= Date.now()) || !Number.isSafeInteger(expiresAt)) {
        throw invalid("expires_at must be a future time in epoch milliseconds, or 0 for a key that does not expire");
      }
      return issuedMessage(await store.createApiKey(org.id, { name, roles, expiresAt }));
    },

    async listApiKeys(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      const state = stateFilters[request.state];
      if (!state) throw invalid(`state ${request.state} is not an ApiKeyState`);
      const page = await store.listApiKeys(org.id, state, pageRequest(request, 50, 200));
      const now = Date.now();
      return { apiKeys: page.items.map((key) => apiKeyMessage(key, now)), nextPageToken: page.nextPageToken };
    },

    async getApiKey(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      requireUuid(request.keyId, "key_id");
      const key = await store.getApiKey(org.id, request.keyId);
      if (!key) throw new ConnectError(`API key "${request.keyId}" not found`, Code.NotFound);
      return apiKeyMessage(key, Date.now());
    },

    async rotateApiKey(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      requireUuid(request.keyId, "key_id");
      return issuedMessage(await store.rotateApiKey(org.id, request.keyId));
    },

    async revokeApiKey(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      requireUuid(request.keyId, "key_id");
      return apiKeyMessage(await store.revokeApiKey(org.id, request.keyId), Date.now());
    },

    async grantPermissions(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      requireUuid(request.principal, "principal");
      const roles = validRoles(request.roles, "roles", 1);
      validResource(request.resource, roles, org);
      const grants = await store.grantPermissions(org.id, request.principal, roles, request.resource);
      return { permissions: grants.map(permissionMessage) };
    },

    async listPermissions(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      const filter = { principal: request.principal, role: request.role, resource: request.resource };
      const page = await store.listPermissions(org.id, filter, pageRequest(request, 100, 500));
      return { permissions: page.items.map(permissionMessage), nextPageToken: page.nextPageToken };
    },

    async revokePermission(request, context) {
      const org = await visibleOrganization(context, request.orgId);
      requireUuid(request.permissionId, "permission_id");
      await store.revokePermission(org.id, request.permissionId);
      return {};
    },
  };
}

/** The contract's slug: it cannot collide with the system organization's `_platform`. */
export const organizationNamePattern = /^[a-z0-9-]{3,63}$/;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `drn:platform:{service}:{region}:{org}:{type}/{id}`, for example `drn:platform:git:local:acme:repo/42`. */
const resourcePattern = /^drn:platform:([a-z][a-z0-9]*):([a-z0-9-]*):([^:\s/]+):[a-z][a-z0-9-]*\/[^\s/]+$/;

const stateFilters: Partial<Record<ApiKeyState, ApiKeyStateFilter>> = {
  [ApiKeyState.UNSPECIFIED]: "any",
  [ApiKeyState.ACTIVE]: "active",
  [ApiKeyState.REVOKED]: "revoked",
  [ApiKeyState.EXPIRED]: "expired",
};

const isOperator = (principal: Principal) => principal.roles.has(operatorRole);

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

function requireUuid(value: string, field: string): void {
  if (value === "") throw invalid(`${field} is required`);
  if (!uuidPattern.test(value)) throw invalid(`${field} must be a UUID, got "${value}"`);
}

function pageRequest(request: { pageSize: number; pageToken: string }, fallback: number, max: number): PageRequest {
  if (request.pageSize < 0) throw invalid("page_size must not be negative");
  return {
    pageSize: request.pageSize === 0 ? fallback : Math.min(request.pageSize, max),
    pageToken: request.pageToken,
  };
}

/** Known, grantable roles, at most one tier per family, deduplicated; 20 at most. */
function validRoles(roles: readonly string[], field: string, least: number): string[] {
  const unique = [...new Set(roles)];
  if (unique.length < least) throw invalid(`${field} must name at least ${least} role`);
  if (unique.length > 20) throw invalid(`${field} may name at most 20 roles`);
  const families = new Map<string, string>();
  for (const name of unique) {
    const role = findRole(name);
    if (!role)
      throw invalid(
        `${field}: unknown role "${name}"; known roles: ${roleCatalog
          .filter((r) => r.grantable)
          .map((r) => r.name)
          .join(", ")}`,
      );
    if (!role.grantable) throw invalid(`${field}: role "${name}" cannot be granted`);
    const other = families.get(role.family);
    if (other) throw invalid(`${field}: "${other}" and "${name}" are tiers of one family; grant one of them`);
    families.set(role.family, name);
  }
  return unique;
}

/** Empty (organization-wide) or a resource name of this organization whose service is every role's family. */
function validResource(resource: string, roles: readonly string[], org: OrganizationRow): void {
  if (resource === "") return;
  const match = resource.length <= 512 ? resourcePattern.exec(resource) : null;
  if (!match)
    throw invalid(
      `resource must be a resource name drn:platform:{service}:{region}:{org}:{type}/{id}, got "${resource}"`,
    );
  const [, service, , orgSegment] = match;
  if (orgSegment !== org.name && orgSegment !== org.id)
    throw invalid(`resource names organization "${orgSegment}", not this one ("${org.name}")`);
  for (const role of roles) {
    if (roleFamily(role) !== service)
      throw invalid(`resource: role "${role}" cannot be limited to a ${service} resource`);
  }
}

function organizationMessage(row: OrganizationRow): Organization {
  return create(OrganizationSchema, {
    orgId: row.id,
    name: row.name,
    displayName: row.displayName,
    createdAt: BigInt(row.createdAt),
  });
}

function apiKeyState(row: ApiKeyRow, now: number): ApiKeyState {
  if (row.state === "revoked") return ApiKeyState.REVOKED;
  return row.expiresAt !== 0 && row.expiresAt <= now ? ApiKeyState.EXPIRED : ApiKeyState.ACTIVE;
}

function apiKeyMessage(row: ApiKeyRow, now: number): ApiKey {
  return create(ApiKeySchema, {
    keyId: row.id,
    orgId: row.orgId,
    name: row.name,
    secretPrefix: row.secretPrefix,
    state: apiKeyState(row, now),
    createdAt: BigInt(row.createdAt),
    expiresAt: BigInt(row.expiresAt),
    lastUsedAt: BigInt(row.lastUsedAt),
    rotatedAt: BigInt(row.rotatedAt),
    revokedAt: BigInt(row.revokedAt),
  });
}

function issuedMessage(issued: IssuedKey) {
  return create(IssuedApiKeySchema, { apiKey: apiKeyMessage(issued.key, Date.now()), secret: issued.secret });
}

function permissionMessage(row: PermissionRow): Permission {
  return create(PermissionSchema, {
    permissionId: row.id,
    orgId: row.orgId,
    principal: row.principal,
    role: row.role,
    resource: row.resource,
    createdAt: BigInt(row.createdAt),
  });
}
