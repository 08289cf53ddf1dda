import { describe, expect, it } from "vitest";
import { attachmentDisposition } from "./content-disposition.js";

describe("attachmentDisposition", () => {
  it("quotes a plain name, escaping quotes", () => {
    expect(attachmentDisposition("report.pdf")).toBe('attachment; filename="report.pdf"');
    expect(attachmentDisposition('say "hi".txt')).toBe('attachment; filename="say \\"hi\\".txt"');
  });

  it("adds the exact UTF-8 name in filename* when the plain one had to lose characters", () => {
    expect(attachmentDisposition("résumé (1).pdf")).toBe(
      `attachment; filename="r_sum_ (1).pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29.pdf`,
    );
    expect(attachmentDisposition("名前's.txt")).toBe(
      `attachment; filename="__'s.txt"; filename*=UTF-8''%E5%90%8D%E5%89%8D%27s.txt`,
    );
  });

  it("names the file, not the folders of an artifact's path", () => {
    expect(attachmentDisposition("reports/2024.csv")).toBe('attachment; filename="2024.csv"');
  });
});
