import { Code, ConnectError } from "@connectrpc/connect";

/**
 * A pool's role catalog: what each application role (on a user, or on a tenant membership) lets its
 * holder do. The document, set with `roleCatalogJson`, is
 *
 *     {"roles": {"editor": {"permissions": ["docs:read", "docs:write"], "description": "Edits documents"}}}
 *
 * Permission strings are the application's own; the issuer only copies them into the token's
 * `permissions` claim (and each tenant's). A role the catalog does not list grants nothing, so a
 * user may hold a role before the catalog defines it. `{}` is the empty catalog.
 */
export interface RoleCatalog {
  readonly roles: ReadonlyMap<string, RoleDefinition>;
}

export interface RoleDefinition {
  readonly permissions: readonly string[];
  readonly description: string;
}

const ROLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const MAX_PERMISSION = 128;
export const EMPTY_ROLE_CATALOG: RoleCatalog = { roles: new Map() };

/** Validates a catalog document; errors name the offending field under `roleCatalogJson`. */
export function parseRoleCatalog(document: Record<string, unknown>): RoleCatalog {
  const field = "roleCatalogJson";
  for (const key of Object.keys(document)) {
    if (key !== "roles")
      invalid(`${field} has an unknown field "${key}"; the catalog is {"roles": {"<role>": {"permissions": [...]}}}`);
  }
  if (document.roles === undefined) return EMPTY_ROLE_CATALOG;
  if (!isObject(document.roles)) invalid(`${field}.roles must be an object of role name to definition`);
  const roles = new Map<string, RoleDefinition>();
  for (const [name, definition] of Object.entries(document.roles)) {
    const at = `${field}.roles.${name}`;
    if (!isRoleName(name)) invalid(`${field}.roles has the role name ${JSON.stringify(name)}: ${ROLE_NAME_RULE}`);
    if (!isObject(definition)) invalid(`${at} must be an object with "permissions"`);
    for (const key of Object.keys(definition)) {
      if (key !== "permissions" && key !== "description") invalid(`${at} has an unknown field "${key}"`);
    }
    const permissions = definition.permissions;
    if (!Array.isArray(permissions)) invalid(`${at}.permissions must be an array of strings`);
    permissions.forEach((permission: unknown, index) => {
      if (typeof permission !== "string" || permission.length === 0 || permission.length > MAX_PERMISSION) {
        invalid(`${at}.permissions[${index}] must be a non-empty string of at most ${MAX_PERMISSION} characters`);
      }
    });
    const description = definition.description ?? "";
    if (typeof description !== "string") invalid(`${at}.description must be a string`);
    roles.set(name, { permissions: [...new Set(permissions as string[])], description });
  }
  return { roles };
}

/** The permissions a set of roles grants: each once, sorted, so equal role sets give equal claims. */
export function resolvePermissions(catalog: RoleCatalog, roles: readonly string[]): string[] {
  const granted = new Set<string>();
  for (const role of roles)
    for (const permission of catalog.roles.get(role)?.permissions ?? []) granted.add(permission);
  return [...granted].sort();
}

export const MAX_ROLES = 100;

/** Checks a role set (a user's app roles, a membership's roles); answers it without repeats. */
export function checkRoleSet(roles: readonly string[], field = "roles"): string[] {
  if (roles.length > MAX_ROLES) invalid(`${field} holds ${roles.length} roles; at most ${MAX_ROLES}`);
  roles.forEach((role, index) => {
    if (typeof role !== "string" || !isRoleName(role))
      invalid(`${field}[${index}] is not a role name: ${ROLE_NAME_RULE}`);
  });
  return [...new Set(roles)];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The form of an app role, on users, memberships and in the catalog. */
export const ROLE_NAME_RULE = "1 to 64 characters, a letter or digit first, then letters, digits and _ . : -";

export function isRoleName(value: string): boolean {
  return ROLE_NAME.test(value);
}

function invalid(message: string): never {
  throw new ConnectError(message, Code.InvalidArgument);
}
