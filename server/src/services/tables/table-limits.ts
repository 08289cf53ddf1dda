/**
 * Limits of warehouse tables. Columns: PostgreSQL allows 1,600 per table, far more than a table
 * imported from a file or written by an action has; 200 keeps one row's statement small. Rows per
 * write: one write is one transaction, so its size bounds how long it holds its locks and how much
 * the server keeps in memory for it (the rows arrive as JSON already in memory). Reads answer at
 * most MAX_READ_ROWS rows per page.
 */
export const MAX_COLUMNS = 200;
export const MAX_WRITE_ROWS = 100_000;
/** Rows per INSERT statement of a write: one parameter per column, each an array of this many values. */
export const INSERT_BATCH_ROWS = 1000;
export const DEFAULT_READ_ROWS = 100;
export const MAX_READ_ROWS = 10_000;

/**
 * Caps of the CSV and JSON Lines parsers: the text they accept (32 MiB of UTF-16 code units, a
 * little more than the bytes of an ASCII file) and the data rows they answer. A file over either
 * is refused whole rather than cut: a silently truncated import looks complete.
 */
export const MAX_PARSE_CHARS = 32 * 1024 * 1024;
export const MAX_PARSE_ROWS = 100_000;
