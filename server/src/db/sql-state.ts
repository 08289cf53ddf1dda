/**
 * PostgreSQL refusals a caller may cause, recognised by SQLSTATE under either driver: drizzle wraps
 * the driver's error as `cause`, so the chain is walked.
 */
function sqlStateError(error: unknown, state: string): Record<string, unknown> | undefined {
  for (let depth = 0, current = error; typeof current === "object" && current !== null && depth < 8; depth++) {
    const fields = current as Record<string, unknown>;
    if (fields.code === state) return fields;
    current = fields.cause;
  }
  return undefined;
}

/** A unique-key violation (23505), optionally of one named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const found = sqlStateError(error, "23505");
  return (
    found !== undefined && (constraint === undefined || (found.constraint ?? found.constraint_name) === constraint)
  );
}

/** A write naming a row that is gone (23503): deleted between a check and the write. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlStateError(error, "23503") !== undefined;
}
