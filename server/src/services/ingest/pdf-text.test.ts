import { describe, expect, it } from "vitest";
import { MAX_PDF_PAGES, pdfText } from "./pdf-text.js";
import { extractText, mediaTypeOf, UnsupportedContentError } from "./text-extraction.js";

/**
 * A minimal PDF written by hand: one page per entry, each line of a page drawn in Helvetica (a
 * standard font, so nothing is embedded), with a correct cross-reference table.
 */
function pdfOf(pages: readonly (readonly string[])[]): Uint8Array {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  pages.forEach((lines, i) => {
    const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);
    const stream = `BT /F1 12 Tf 14 TL 50 750 Td ${lines.map((line) => `(${escape(line)}) Tj T*`).join(" ")} ET`;
    objects[pageIds[i]!] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`;
    objects[pageIds[i]! + 1] = `<< /Length ${Buffer.byteLength(stream, "latin1")} >>\nstream\n${stream}\nendstream`;
  });
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(body, "latin1");
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(body, "latin1");
  body += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) body += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(body, "latin1"));
}

async function failure(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("PDF text extraction", () => {
  it("extracts each page's lines, pages separated by a blank line", async () => {
    const pdf = pdfOf([["Quarterly report", "Revenue (net) grew 12%"], ["Page two text"]]);
    expect(await extractText("r.pdf", "application/pdf", pdf)).toBe(
      "Quarterly report\nRevenue (net) grew 12%\n\nPage two text",
    );
  });

  it("recognises a PDF by its key or its first bytes when the stored type says nothing", () => {
    expect(mediaTypeOf("docs/Report.PDF", "")).toBe("application/pdf");
    expect(mediaTypeOf("docs/report.pdf", "application/octet-stream")).toBe("application/pdf");
    expect(mediaTypeOf("docs/report", "", pdfOf([["x"]]))).toBe("application/pdf");
    expect(mediaTypeOf("docs/report", "", new TextEncoder().encode("%PD"))).toBe("application/octet-stream");
    expect(mediaTypeOf("docs/report", "text/plain", pdfOf([["x"]]))).toBe("text/plain");
  });

  it("turns a corrupt, truncated or empty PDF into a clear error", async () => {
    const whole = pdfOf([["Some text"]]);
    for (const bytes of [
      new TextEncoder().encode("%PDF-1.7\nthis is not a pdf"),
      whole.slice(0, 40),
      new Uint8Array(),
      new TextEncoder().encode("plain words"),
    ]) {
      const error = await failure(() => extractText("bad.pdf", "application/pdf", bytes));
      expect(error).toBeInstanceOf(UnsupportedContentError);
      expect(error.message).toMatch(/^bad\.pdf: (not a readable PDF|the PDF)/);
    }
  });

  it("says when a PDF has no text layer", async () => {
    const error = await failure(() => pdfText("scan.pdf", pdfOf([[]])));
    expect(error.message).toBe("scan.pdf: the PDF has no text layer (a scanned document needs OCR first)");
  });

  it("refuses a PDF over the page cap", async () => {
    const error = await failure(() =>
      pdfText("huge.pdf", pdfOf(Array.from({ length: MAX_PDF_PAGES + 1 }, () => ["x"]))),
    );
    expect(error.message).toBe(
      `huge.pdf: the PDF has ${MAX_PDF_PAGES + 1} pages; text is extracted from PDFs of at most ${MAX_PDF_PAGES}`,
    );
  });

  it("hands the event loop back while extracting a big PDF", async () => {
    const lines = Array.from({ length: 50 }, (_, l) => `Line ${l} lorem ipsum dolor sit amet consectetur`);
    const pdf = pdfOf(Array.from({ length: 500 }, () => lines));
    // Timers run only when the loop is free: held for the whole extraction, this one would fire
    // once at most; handed back page by page, it fires many times whatever the machine's speed.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const text = await pdfText("big.pdf", pdf);
    clearInterval(timer);
    expect(text.split("\n\n")).toHaveLength(500);
    expect(ticks).toBeGreaterThan(20);
  });
});
