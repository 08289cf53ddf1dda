import type * as PdfJsModule from "pdfjs-dist/legacy/build/pdf.mjs";
import { UnsupportedContentError } from "./unsupported-content.js";

/**
 * Pages a PDF may have for its text to be extracted. pdf.js runs in this thread (in Node its
 * "worker" is a fake one whose messages are promise callbacks on the same event loop), so the
 * extraction gives the loop back after every page: the loop is held for one page's parse at a
 * time (a few milliseconds for a text page; pdf-text.test.ts checks a 300-page PDF), plus the
 * opening parse of the file's structure, which grows with its bytes, already capped by whoever
 * read the object. The page cap bounds the whole extraction's time (a 500-page text PDF takes
 * about 2 s) and the text it makes.
 */
export const MAX_PDF_PAGES = 2000;

type PdfJs = typeof PdfJsModule;
let loading: Promise<PdfJs> | undefined;

/** pdf.js is loaded on the first PDF, so a server that never sees one never pays for it. */
function pdfjs(): Promise<PdfJs> {
  return (loading ??= import("pdfjs-dist/legacy/build/pdf.mjs"));
}

/**
 * The text of a PDF's pages: each text run as pdf.js reads it, a line break where it marks the
 * end of a line, a blank line between pages. A file that is not a readable PDF, one locked with
 * a password, one over the page cap or one without any text (a scan, which needs OCR) is an
 * UnsupportedContentError saying which, never a crash.
 */
export async function pdfText(key: string, bytes: Uint8Array): Promise<string> {
  const { getDocument } = await pdfjs();
  const task = getDocument({
    // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
    data: new Uint8Array(bytes),
    // No code generated from the document's fonts, no fonts loaded from the system or the
    // network, and only errors logged: text extraction needs none of it.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  let document;
  try {
    document = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => {});
    const name = (error as { name?: unknown } | null)?.name;
    if (name === "PasswordException") throw new UnsupportedContentError(`${key}: the PDF is protected by a password`);
    throw new UnsupportedContentError(`${key}: not a readable PDF (${reason(error)})`);
  }
  try {
    if (document.numPages > MAX_PDF_PAGES)
      throw new UnsupportedContentError(
        `${key}: the PDF has ${document.numPages} pages; text is extracted from PDFs of at most ${MAX_PDF_PAGES}`,
      );
    const pages: string[] = [];
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
      }
      pages.push(text.replace(/[ \t]+\n/g, "\n").trim());
      page.cleanup();
      // pdf.js's messages are promise callbacks, which never let timers or I/O in: give the
      // event loop back between pages.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const text = pages.filter((page) => page !== "").join("\n\n");
    if (text === "")
      throw new UnsupportedContentError(`${key}: the PDF has no text layer (a scanned document needs OCR first)`);
    return text;
  } catch (error) {
    if (error instanceof UnsupportedContentError) throw error;
    throw new UnsupportedContentError(`${key}: the PDF could not be read (${reason(error)})`);
  } finally {
    await document.destroy().catch(() => {});
  }
}

/** pdf.js's own message (it names what is wrong with the file, nothing of the server). */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 197)}...` : message;
}
