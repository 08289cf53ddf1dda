import type { JsonObject } from "../script/dsl/cel-json.js";

/**
 * Rows as CSV (RFC 4180), for exporting a table: a header of the column names, then one record
 * per row, CRLF line ends. A field holding a comma, a quote, a line break, or space at either
 * end is quoted, its quotes doubled. null and missing values are empty fields, objects and
 * arrays their JSON text, other values their text: parseCsv reads the result back to the same
 * rows, but for empty strings (which read back as null) and json (which reads back as text).
 */
export function formatCsv(columns: readonly { readonly name: string }[], rows: readonly JsonObject[]): string {
  const lines = [columns.map((column) => field(column.name)).join(",")];
  for (const row of rows) {
    lines.push(
      columns
        .map((column) => {
          const value = row[column.name];
          if (value === null || value === undefined) return "";
          return field(typeof value === "object" ? JSON.stringify(value) : String(value));
        })
        .join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

function field(text: string): string {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
