// Proto comments record where a design choice came from, marked internal with `(-- ... --)`; the
// generator leaves those spans out. A remark left unmarked names the specification or a source
// system, and a marker that reaches a document means a span was not recognised.
const rules = [
  /specification|not shown|grpc-gateway|modell?ed on|designed (?:like|after)|our addition/i,
  /\bAIP\b|\bfollowing [A-Z]|\bfollows? (?:the )?[A-Z][a-z]+'s\b|\bas in [A-Z][a-z]+'s\b/,
  /\b(?:Google(?! Drive| Cloud Storage)|AWS|Temporal|Zilliz|Milvus|Airbyte|Fivetran|Nango|Kubernetes|Docker|BuildKit|Cloud Build|Cloud Run|Lambda|Depot|BigQuery|Dagster|Windmill|Hatchet|DBOS|Trigger\.dev|Stripe|Bigtable|POSIX|Modal's)\b/,
  /\(--|--\)/,
];

/** Every remark on where a choice came from, or internal marker, in a published document's text, with some context. */
export function provenanceRemarks(text: string): string[] {
  return rules.flatMap((rule) => {
    const found = rule.exec(text);
    return found ? [text.slice(Math.max(0, found.index - 80), found.index + found[0].length + 80)] : [];
  });
}
