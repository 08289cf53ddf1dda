import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { MAX_PARSE_ROWS } from "./table-limits.js";
import { columnNames, parseCsv, parseJsonLines } from "./table-parsers.js";
import { inferColumns, isoTimestamp, sqlText, ValueError } from "./table-values.js";

function invalidMessage(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    const connect = ConnectError.from(error);
    expect(connect.code).toBe(Code.InvalidArgument);
    return connect.rawMessage;
  }
  throw new Error("expected an error");
}

describe("parseCsv", () => {
  it("reads quoted fields, doubled quotes, embedded newlines and CRLF, typing columns by inference", () => {
    const text =
      "\uFEFFOrder ID,Name,Price,Paid,Placed At,Note\r\n" +
      '1,"Smith, Jane",12.5,true,2024-03-01T10:00:00Z,"said ""hi""\r\nthen left"\r\n' +
      "2,Bob,7,FALSE,2024-03-02,\r\n";
    const parsed = parseCsv(text);
    expect(parsed.columns).toEqual([
      { name: "order_id", type: "integer" },
      { name: "name", type: "string" },
      { name: "price", type: "number" },
      { name: "paid", type: "boolean" },
      { name: "placed_at", type: "timestamp" },
      { name: "note", type: "string" },
    ]);
    expect(parsed.rows).toEqual([
      {
        order_id: 1,
        name: "Smith, Jane",
        price: 12.5,
        paid: true,
        placed_at: "2024-03-01T10:00:00Z",
        note: 'said "hi"\r\nthen left',
      },
      { order_id: 2, name: "Bob", price: 7, paid: false, placed_at: "2024-03-02T00:00:00Z", note: null },
    ]);
  });

  it("takes LF line ends, no final newline, short records and skips blank lines", () => {
    const parsed = parseCsv("a,b,c\n1,x\n\n3,y,z");
    expect(parsed.rows).toEqual([
      { a: 1, b: "x", c: null },
      { a: 3, b: "y", c: "z" },
    ]);
    expect(parsed.columns.map((column) => column.type)).toEqual(["integer", "string", "string"]);
  });

  it("keeps columns of a header-only file, typed string", () => {
    expect(parseCsv("a,b\n")).toEqual({
      columns: [
        { name: "a", type: "string" },
        { name: "b", type: "string" },
      ],
      rows: [],
    });
  });

  it("keeps postcodes with leading zeros as text", () => {
    expect(parseCsv("zip\n00501\n10001\n").columns).toEqual([{ name: "zip", type: "string" }]);
  });

  it("names the line of a record with too many fields, counting newlines inside quotes", () => {
    expect(invalidMessage(() => parseCsv('a,b\n"x\ny",1\n1,2,3\n'))).toBe("line 4 has 3 fields; the header has 2");
  });

  it("names the line of an unclosed quote and of text after a closing quote", () => {
    expect(invalidMessage(() => parseCsv('a\n1\n"open\n'))).toBe("line 3: a quoted field is not closed");
    expect(invalidMessage(() => parseCsv('a,b\n"x"y,1\n'))).toBe("line 2: a closing quote must end its field");
  });

  it("refuses an empty file and more rows than the cap", () => {
    expect(invalidMessage(() => parseCsv(""))).toMatch(/empty/);
    expect(invalidMessage(() => parseCsv("a\n" + "1\n".repeat(MAX_PARSE_ROWS + 1)))).toMatch(/more than 100000 rows/);
  });
});

describe("columnNames", () => {
  it("normalises header names to valid, distinct column names", () => {
    expect(columnNames(["Order ID", "2024 Total (€)", "", "Café", "order id", "__x__", "a".repeat(80)])).toEqual([
      "order_id",
      "c_2024_total",
      "column_3",
      "cafe",
      "order_id_2",
      "x",
      "a".repeat(63),
    ]);
  });
});

describe("parseJsonLines", () => {
  it("reads one object per line, skipping blank lines, normalising keys and inferring types", () => {
    const parsed = parseJsonLines(
      '{"Id": 1, "tags": ["a"], "score": 1}\r\n\n{"Id": 2, "score": 2.5, "when": "2024-01-01T00:00:00+02:00"}\n',
    );
    expect(parsed.rows).toEqual([
      { id: 1, tags: ["a"], score: 1 },
      { id: 2, score: 2.5, when: "2024-01-01T00:00:00+02:00" },
    ]);
    expect(parsed.columns).toEqual([
      { name: "id", type: "integer" },
      { name: "tags", type: "json" },
      { name: "score", type: "number" },
      { name: "when", type: "timestamp" },
    ]);
  });

  it("names the line that is not JSON or not an object", () => {
    expect(invalidMessage(() => parseJsonLines('{"a":1}\n\n{"a":\n'))).toBe("line 3 is not valid JSON");
    expect(invalidMessage(() => parseJsonLines('{"a":1}\n[1,2]\n'))).toBe("line 2 is not a JSON object");
  });
});

describe("inferColumns", () => {
  it("unifies integer and number, makes objects json and other mixes string", () => {
    expect(
      inferColumns([
        { a: 1, b: true, c: { x: 1 }, d: "2024-01-01", e: null, f: 1 },
        { a: 2.5, b: "yes", c: 3, d: "2024-13-01", f: "2" },
      ]),
    ).toEqual([
      { name: "a", type: "number" },
      { name: "b", type: "string" },
      { name: "c", type: "json" },
      { name: "d", type: "string" },
      { name: "e", type: "string" },
      { name: "f", type: "integer" },
    ]);
  });
});

describe("values", () => {
  it("normalises ISO-8601 timestamps and refuses days the calendar lacks", () => {
    expect(isoTimestamp("2024-02-29 08:30")).toBe("2024-02-29T08:30:00Z");
    expect(isoTimestamp("2024-02-29T08:30:00.123+0530")).toBe("2024-02-29T08:30:00.123+05:30");
    expect(isoTimestamp("2023-02-29")).toBeUndefined();
    expect(isoTimestamp("2024-01-01T24:00:00Z")).toBeUndefined();
    expect(isoTimestamp("yesterday")).toBeUndefined();
  });

  it("coerces text to the column type and explains a value that does not fit", () => {
    expect(sqlText(" 42 ", "integer")).toBe("42");
    expect(sqlText("", "integer")).toBeNull();
    expect(sqlText("", "string")).toBe("");
    expect(sqlText(3, "string")).toBe("3");
    expect(sqlText("TRUE", "boolean")).toBe("true");
    expect(sqlText({ a: 1 }, "json")).toBe('{"a":1}');
    expect(() => sqlText(1.5, "integer")).toThrow(ValueError);
    expect(() => sqlText(2 ** 53, "integer")).toThrow(/2\^53/);
    expect(() => sqlText("abc", "number")).toThrow('expected a number, got "abc"');
    expect(() => sqlText({}, "string")).toThrow(ValueError);
  });
});
