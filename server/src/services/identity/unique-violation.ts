/**
 * Whether a database error (or the error it wraps: drizzle wraps the driver's) is a unique-key
 * violation, SQLSTATE 23505, optionally of one named constraint or index.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const fields = current as Error & { code?: unknown; constraint?: unknown; constraint_name?: unknown };
    if (fields.code === "23505")
      return constraint === undefined || (fields.constraint ?? fields.constraint_name) === constraint;
  }
  return false;
}
