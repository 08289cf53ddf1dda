import { PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import {
  callData,
  createBuckets,
  createOrganization,
  dataUrl,
  okData,
  s3ClientOf,
  type TestOrganization,
} from "./shared-server.js";

/** The shipped action catalog on the shared server, through the data listener's HTTP routes. */

type Line = Record<string, Record<string, unknown>>;

let org: TestOrganization;

beforeAll(async () => {
  org = await createOrganization("shipped-actions");
  await createBuckets(org, "files");
  const s3 = await s3ClientOf(org);
  try {
    const put = (Key: string, Body: string, ContentType?: string) =>
      s3.send(new PutObjectCommand({ Bucket: "files", Key, Body, ...(ContentType ? { ContentType } : {}) }));
    await put("letter.txt", "Write to ada@example.com or call +44 20 7946 0958 before 2026-01-31.", "text/plain");
    await put("scan", "%PDF-1.4\n%%EOF\n");
    await put("people.csv", "name,age,city\nAda,36,London\nAlan,41,\nGrace,85,Arlington\n", "text/csv");
  } finally {
    s3.destroy();
  }
});

/** RunAction's NDJSON lines. */
async function run(body: unknown): Promise<{ status: number; lines: Line[] }> {
  const answer = await callDataText("/actions/run", body);
  return {
    status: answer.status,
    lines: answer.text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Line),
  };
}

async function callDataText(path: string, body: unknown) {
  const response = await fetch(`${dataUrl()}${path}`, {
    method: "POST",
    headers: { ...org.headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const object = (key: string) => ({ pillar: "objects", objectSingle: { bucket: "files", key } });
const table = (tableName: string) => ({ pillar: "tables", tableSingle: { bucket: "files", tableName } });
const kinds = (lines: Line[]) => lines.map((line) => Object.keys(line)[0]);

describe("the shipped actions", () => {
  it("are offered by what they take", async () => {
    const list = async (selection: unknown) =>
      (
        await okData(callData<{ actions: { actionId: string }[] }>(org, "POST", "/actions/list", { selection }))
      ).actions.map((action) => action.actionId);
    const text = await list(object("letter.txt"));
    expect(text).toEqual(expect.arrayContaining(["extract_text", "redact_pii"]));
    expect(text).not.toContain("import_table");
    // Neither a type nor an extension: its first bytes make it a PDF.
    expect(await list(object("scan"))).toContain("extract_text");
    const csv = await list(object("people.csv"));
    expect(csv).toContain("import_table");
    expect(csv).not.toContain("extract_text");
  });

  it("extract text (sync: started then completed) and redact it", async () => {
    const extracted = await run({ selection: object("letter.txt"), actionId: "extract_text" });
    expect(extracted.status).toBe(200);
    expect(kinds(extracted.lines)).toEqual(["started", "completed"]);
    expect(JSON.stringify(extracted.lines[1])).toContain("ada@example.com");
    const redacted = await run({ selection: object("letter.txt"), actionId: "redact_pii" });
    expect(kinds(redacted.lines)).toEqual(["started", "completed"]);
    const { runId } = redacted.lines[0]!["started"] as { runId: string };
    const got = await okData(
      callData<{ manifest: { outputInline: string; outputKind: string } }>(org, "POST", "/actions/runs/get", {
        bucket: "files",
        runId,
      }),
    );
    expect(got.manifest.outputKind).toBe("OUTPUT_KIND_TEXT");
    expect(got.manifest.outputInline).not.toContain("ada@example.com");
    expect(got.manifest.outputInline).toContain("2026-01-31");
  });

  it("import a CSV as a table, describe it and export it as a file", async () => {
    const imported = await run({
      selection: object("people.csv"),
      actionId: "import_table",
      params: { table_name: "people" },
    });
    expect(kinds(imported.lines)).toEqual(["started", "completed"]);
    expect(imported.lines[1]!["completed"]!["output"]).toMatchObject({ row_count: 3 });
    const { runId } = imported.lines[0]!["started"] as { runId: string };
    const manifest = await okData(
      callData<{ manifest: Record<string, unknown> }>(org, "POST", "/actions/runs/get", { bucket: "files", runId }),
    );
    expect(manifest.manifest["warehouseRows"]).toEqual({ bucket: "files", tableName: "people", rowCount: "3" });

    const described = await run({ selection: table("people"), actionId: "describe_table" });
    expect(kinds(described.lines)).toEqual(["started", "completed"]);
    expect(JSON.stringify(described.lines[1])).toContain("city");

    const exported = await run({ selection: table("people"), actionId: "export_table_csv" });
    expect(kinds(exported.lines)).toEqual(["started", "completed"]);
    const exportRun = (exported.lines[0]!["started"] as { runId: string }).runId;
    const file = await okData(
      callData<{ manifest: { siblingFile: { key: string } }; siblingOutput: string }>(
        org,
        "POST",
        "/actions/runs/get",
        {
          bucket: "files",
          runId: exportRun,
          inlineSibling: true,
        },
      ),
    );
    expect(file.manifest.siblingFile.key).toMatch(/^_actions\/runs\/\d{13}_[0-9a-f-]{36}\/output\.csv$/);
    expect(file.siblingOutput).toContain("Grace");
  });
});
