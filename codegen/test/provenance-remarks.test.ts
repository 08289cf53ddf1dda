import { describe, expect, it } from "vitest";
import { provenanceRemarks } from "./provenance-remarks.js";

// The documents' check must notice what a proto comment would publish if a remark were left
// unmarked, or if a marker were not removed.
describe("provenanceRemarks", () => {
  it("finds remarks left unmarked", () => {
    for (const remark of [
      "Returns an app's metadata. Not shown in the specification; AIP-131.",
      "Enqueued, as a Temporal task that is scheduled but not started.",
      "An immutable numbered version (AIP-style revision states).",
      "Re-ingest unchanged objects too (Fivetran's re-sync).",
      "The fields are modelled on the source resource.",
    ]) {
      expect(provenanceRemarks(remark), remark).not.toEqual([]);
    }
  });

  it("finds an internal marker that reached the text", () => {
    expect(provenanceRemarks("Lists apps. (-- internal --)")).toHaveLength(1);
    expect(provenanceRemarks("Lists apps. --) rest")).toHaveLength(1);
  });

  it("accepts what the documents say about our API", () => {
    const text =
      "Build with the Dockerfile at `dockerfile_path`; `docker build` sends an uncompressed tar. " +
      "Objects of Amazon S3, Google Cloud Storage or Google Drive. Keys follow the SetEnvVar rules; " +
      "filter as in ListPipelines (`--target` flag).";
    expect(provenanceRemarks(text)).toEqual([]);
  });
});
