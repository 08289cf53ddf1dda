/**
 * The parts of an OpenAPI 3.1 document the listener documents are assembled from. Everything else
 * in a document (schemas, parameters, examples) is carried through untouched, so it stays
 * `unknown` here.
 */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string; [key: string]: unknown };
  servers?: OpenApiServer[];
  security?: SecurityRequirement[];
  tags?: { name: string; [key: string]: unknown }[];
  paths: Record<string, PathItem>;
  components?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface OpenApiServer {
  url: string;
  description?: string;
  variables?: Record<string, { default: string; description?: string; enum?: string[] }>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  operationId?: string;
  tags?: string[];
  security?: SecurityRequirement[];
  [key: string]: unknown;
}

/** A path item: its operations by lower-case method, and shared keys (`parameters`, `summary`, …). */
export type PathItem = Record<string, unknown>;

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export function isHttpMethod(key: string): key is (typeof HTTP_METHODS)[number] {
  return (HTTP_METHODS as readonly string[]).includes(key);
}

/** The operations of a path item, by lower-case method. */
export function operationsOf(item: PathItem): [string, Operation][] {
  return Object.entries(item).filter(([key]) => isHttpMethod(key)) as [string, Operation][];
}

const COMPONENT_REF = /^#\/components\/([^/]+)\/([^/]+)$/;

/**
 * What a document's paths use, transitively: every component reached from the paths (by `$ref`,
 * or by a discriminator mapping, which names components the same way) and every security scheme
 * an operation or the document requires. Unreached components are left out of a listener's
 * document, so it does not describe messages of services the listener does not serve.
 */
export function pruneUnusedComponents(document: OpenApiDocument): OpenApiDocument {
  const components = document.components ?? {};
  const kept: Record<string, Record<string, unknown>> = {};
  const keep = (kind: string, name: string): void => {
    const value = components[kind]?.[name];
    if (value === undefined || kept[kind]?.[name] !== undefined) return;
    (kept[kind] ??= {})[name] = value;
    visit(value);
  };
  const keepSchemes = (requirements: unknown): void => {
    if (!Array.isArray(requirements)) return;
    for (const requirement of requirements as SecurityRequirement[])
      for (const scheme of Object.keys(requirement)) keep("securitySchemes", scheme);
  };
  const visit = (value: unknown): void => {
    if (typeof value === "string") {
      const ref = COMPONENT_REF.exec(value);
      if (ref) keep(decodePointer(ref[1]!), decodePointer(ref[2]!));
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === "object") {
      for (const item of Object.values(value)) visit(item);
    }
  };
  keepSchemes(document.security);
  for (const item of Object.values(document.paths)) {
    visit(item);
    for (const [, operation] of operationsOf(item)) keepSchemes(operation.security);
  }
  // Kinds in the document's own order, and names sorted, so the output does not depend on the walk.
  const ordered: Record<string, Record<string, unknown>> = {};
  for (const kind of Object.keys(components)) {
    const names = Object.keys(kept[kind] ?? {});
    if (names.length > 0)
      ordered[kind] = Object.fromEntries(
        Object.keys(components[kind]!)
          .filter((n) => names.includes(n))
          .map((n) => [n, kept[kind]![n]]),
      );
  }
  const { components: _components, ...rest } = document;
  return Object.keys(ordered).length > 0 ? { ...rest, components: ordered } : rest;
}

/** The document with only the tags its operations use, in the document's order. */
export function pruneUnusedTags(document: OpenApiDocument): OpenApiDocument {
  if (!document.tags) return document;
  const used = new Set(
    Object.values(document.paths).flatMap((item) =>
      operationsOf(item).flatMap(([, operation]) => operation.tags ?? []),
    ),
  );
  return { ...document, tags: document.tags.filter((tag) => used.has(tag.name)) };
}

/** A JSON pointer token as a plain name (`~1` is `/`, `~0` is `~`). */
function decodePointer(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}
