import { operationsOf, type OpenApiDocument, type PathItem, type SecurityRequirement } from "./openapi-document.js";

/**
 * One document serving the paths of both. Components the two share by name and content are kept
 * once; a component of `addition` whose name `base` already uses for something else is renamed
 * `<namespace>.<name>`, and every reference to it in `addition` follows. `addition`'s document-wide
 * security moves onto its operations (the merged document's own is `base`'s), and its tags follow
 * `base`'s. Both documents' paths must already be where the listener serves them.
 */
export function mergeDocuments(base: OpenApiDocument, addition: OpenApiDocument, namespace: string): OpenApiDocument {
  const components: Record<string, Record<string, unknown>> = Object.fromEntries(
    Object.entries(base.components ?? {}).map(([kind, entries]) => [kind, { ...entries }]),
  );
  /** `<kind>/<name>` of a renamed component of `addition`, to its new name. */
  const renames = new Map<string, string>();
  for (const [kind, entries] of Object.entries(addition.components ?? {})) {
    for (const [name, value] of Object.entries(entries)) {
      const existing = components[kind]?.[name];
      if (existing !== undefined && !sameComponent(kind, existing, value))
        renames.set(`${kind}/${name}`, `${namespace}.${name}`);
    }
  }
  const rename = createRenamer(renames);
  for (const [kind, entries] of Object.entries(addition.components ?? {})) {
    for (const [name, value] of Object.entries(entries)) {
      (components[kind] ??= {})[renames.get(`${kind}/${name}`) ?? name] ??= rename(value);
    }
  }

  const paths: Record<string, PathItem> = { ...base.paths };
  for (const [path, item] of Object.entries(addition.paths)) {
    if (paths[path] !== undefined) throw new Error(`both documents describe ${path}`);
    const renamed = rename(item) as PathItem;
    if (addition.security) {
      for (const [method, operation] of operationsOf(renamed))
        renamed[method] = { ...operation, security: operation.security ?? rename(addition.security) };
    }
    paths[path] = renamed;
  }

  const tagNames = new Set((base.tags ?? []).map((tag) => tag.name));
  const tags = [...(base.tags ?? []), ...(addition.tags ?? []).filter((tag) => !tagNames.has(tag.name))];
  return { ...base, ...(tags.length > 0 ? { tags } : {}), paths, components };
}

/**
 * Two security schemes that authenticate alike are one, whatever their descriptions say; other
 * components are one only when equal.
 */
function sameComponent(kind: string, a: unknown, b: unknown): boolean {
  if (kind === "securitySchemes")
    return JSON.stringify(withoutDescription(a)) === JSON.stringify(withoutDescription(b));
  return JSON.stringify(a) === JSON.stringify(b);
}

function withoutDescription(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  const { description: _description, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** A deep copy with references to renamed components, and security requirements naming them, rewritten. */
function createRenamer(renames: ReadonlyMap<string, string>): (value: unknown) => unknown {
  if (renames.size === 0) return (value) => value;
  const rename = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") {
      const ref = /^#\/components\/([^/]+)\/([^/]+)$/.exec(value);
      const renamed = ref ? renames.get(`${ref[1]}/${ref[2]}`) : undefined;
      return renamed ? `#/components/${ref![1]}/${renamed}` : value;
    }
    if (Array.isArray(value)) {
      if (key === "security")
        return (value as SecurityRequirement[]).map((requirement) =>
          Object.fromEntries(
            Object.entries(requirement).map(([scheme, scopes]) => [
              renames.get(`securitySchemes/${scheme}`) ?? scheme,
              scopes,
            ]),
          ),
        );
      return value.map((item) => rename(item));
    }
    if (value !== null && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rename(v, k)]));
    return value;
  };
  return (value) => rename(value);
}
