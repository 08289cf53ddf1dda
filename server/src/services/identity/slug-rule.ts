import { Code, ConnectError } from "@connectrpc/connect";

const SLUG = /^[a-z0-9-]{1,63}$/;

/**
 * Tenant slugs and pool names: 1 to 63 characters of [a-z0-9-], so they sit in URLs and in token
 * claims unescaped. Throws INVALID_ARGUMENT naming the field.
 */
export function checkSlug(field: string, value: string): string {
  if (!SLUG.test(value))
    throw new ConnectError(
      `${field} must be 1 to 63 characters of a-z, 0-9 and -, got ${JSON.stringify(value)}`,
      Code.InvalidArgument,
    );
  return value;
}
