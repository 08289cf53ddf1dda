import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { TableColumn } from "./table-columns.js";
import { MAX_PARSE_CHARS, MAX_PARSE_ROWS } from "./table-limits.js";
import { inferColumns, typedCell } from "./table-values.js";

/** Rows parsed from a file, with the columns inferred from them. */
export interface ParsedRows {
  readonly columns: TableColumn[];
  readonly rows: JsonObject[];
}

/**
 * A CSV file (RFC 4180: comma-separated, fields in double quotes may hold commas, line breaks
 * and doubled quotes; CRLF or LF line ends; a byte-order mark dropped). The first record is the
 * header: its names become column names (see `columnNames`). Cells are typed by inference over
 * the whole column; an empty cell is null. A record with more fields than the header is an error
 * naming its line; one with fewer leaves the rest null; blank lines are skipped.
 */
export function parseCsv(text: string): ParsedRows {
  checkSize(text);
  const records = csvRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const header = records.next();
  if (header.done) throw invalid("the CSV file is empty: its first line must name the columns");
  const names = columnNames(header.value.fields);
  const cells: string[][] = [];
  for (const record of records) {
    if (record.fields.length === 1 && record.fields[0] === "") continue;
    if (record.fields.length > names.length)
      throw invalid(`line ${record.line} has ${record.fields.length} fields; the header has ${names.length}`);
    if (cells.length === MAX_PARSE_ROWS) throw tooManyRows();
    cells.push(record.fields);
  }
  const textRows = cells.map((fields) => Object.fromEntries(names.map((name, i) => [name, fields[i] ?? ""])));
  const columns = inferColumns(textRows);
  // A file with a header and no rows still has its columns (typed string).
  const all = names.map((name) => columns.find((column) => column.name === name) ?? { name, type: "string" as const });
  const rows = textRows.map((row) =>
    Object.fromEntries(all.map((column) => [column.name, typedCell(row[column.name]!, column.type)])),
  );
  return { columns: all, rows };
}

interface CsvRecord {
  readonly fields: string[];
  /** The line the record starts on, 1-based. */
  readonly line: number;
}

function* csvRecords(text: string): Generator<CsvRecord> {
  let line = 1;
  let index = 0;
  while (index < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = "";
      if (text[index] === '"') {
        const opened = line;
        index++;
        for (;;) {
          if (index >= text.length) throw invalid(`line ${opened}: a quoted field is not closed`);
          const char = text[index]!;
          if (char === '"') {
            if (text[index + 1] === '"') {
              field += '"';
              index += 2;
              continue;
            }
            index++;
            break;
          }
          if (char === "\n") line++;
          field += char;
          index++;
        }
        const after = text[index];
        if (after !== undefined && after !== "," && after !== "\n" && after !== "\r")
          throw invalid(`line ${line}: a closing quote must end its field`);
      } else {
        const end = nextDelimiter(text, index);
        field = text.slice(index, end);
        index = end;
      }
      fields.push(field);
      if (text[index] === ",") {
        index++;
        continue;
      }
      // End of record: CRLF, LF, a lone CR, or the end of the text.
      if (text[index] === "\r") index++;
      if (text[index] === "\n") index++;
      line++;
      break;
    }
    yield { fields, line: start };
  }
}

function nextDelimiter(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 44 /* , */ || char === 10 /* \n */ || char === 13 /* \r */) return i;
  }
  return text.length;
}

/**
 * JSON Lines: one JSON object per line (blank lines skipped, CRLF accepted). Keys become column
 * names (see `columnNames`); values are kept as they are, and the columns are inferred from them.
 * A line that is not valid JSON, or not an object, is an error naming its line number.
 */
export function parseJsonLines(text: string): ParsedRows {
  checkSize(text);
  const rows: JsonObject[] = [];
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
  lines.forEach((raw, index) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    let value: JsonValue;
    try {
      value = JSON.parse(line) as JsonValue;
    } catch {
      throw invalid(`line ${index + 1} is not valid JSON`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw invalid(`line ${index + 1} is not a JSON object`);
    if (rows.length === MAX_PARSE_ROWS) throw tooManyRows();
    const row: JsonObject = {};
    for (const [key, cell] of Object.entries(value)) {
      let name = names.get(key);
      if (name === undefined) {
        name = columnName(key, names.size, taken);
        names.set(key, name);
      }
      row[name] = cell;
    }
    rows.push(row);
  });
  return { columns: inferColumns(rows), rows };
}

/**
 * Column names from a header: lower case, accents dropped, every run of other characters one
 * `_`, no `_` at either end, a leading digit prefixed with `c_`, at most 63 characters; an empty
 * name becomes `column_<n>` (1-based) and a repeated one gets `_2`, `_3`... So `Order ID` is
 * `order_id` and `2024 Total (€)` is `c_2024_total`.
 */
export function columnNames(header: readonly string[]): string[] {
  const taken = new Set<string>();
  return header.map((raw, index) => columnName(raw, index, taken));
}

function columnName(raw: string, index: number, taken: Set<string>): string {
  let base = raw
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (base === "") base = `column_${index + 1}`;
  if (/^[0-9]/.test(base)) base = `c_${base}`;
  base = base.slice(0, 63);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 63 - `_${n}`.length)}_${n}`;
  taken.add(name);
  return name;
}

function checkSize(text: string): void {
  if (text.length > MAX_PARSE_CHARS)
    throw invalid(`the file has ${text.length} characters; the limit is ${MAX_PARSE_CHARS} (32 MiB)`);
}

function tooManyRows(): ConnectError {
  return invalid(`the file has more than ${MAX_PARSE_ROWS} rows, the limit`);
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
