/**
 * The bindings an action definition may use (server/actions/<id>.json `bind`): template input
 * <- a value the actions service fills in from the selection, so a template never reads storage
 * itself. Each binding lists the selection shapes (Selection oneof member names) it can be filled
 * from; a definition may bind it only when every shape it accepts is among them. The service
 * resolves these and the catalog loader checks definitions against them: one list for both.
 */
export const ACTION_BINDINGS = {
  /** The selected object's bucket. */
  "object.bucket": ["object_single"],
  /** The selected object's key. */
  "object.key": ["object_single"],
  /** The selected object's content type: as selected, else as stored, else by extension or sniffing. */
  "object.content_type": ["object_single"],
  /** The object's extracted text (PDF, HTML, Markdown, plain text: the ingest text extraction), capped. */
  "object.text": ["object_single"],
  /** The object parsed as CSV (header row) or JSON Lines: `[{column: value}]`, capped. */
  "object.rows": ["object_single"],
  /** The selected objects' keys: string[]. */
  "objects.keys": ["objects_multi"],
  /** The selected objects: `[{key, content_type, text}]`. */
  "objects.items": ["objects_multi"],
  /** The selected collection's name. */
  "collection.name": ["collection_single", "chunks_multi"],
  /** The selected chunks as read from the collection: `[{id, content, metadata}]`. */
  "chunks.items": ["chunks_multi"],
  /** The selected table's name. */
  "table.name": ["table_single"],
  /** The table's columns: `[{name, type}]`. */
  "table.columns": ["table_single"],
  /** The table's rows, capped (`table.row_count` is the true count). */
  "table.rows": ["table_single"],
  /** Rows in the table: integer. */
  "table.row_count": ["table_single"],
  /** A search of the collection `params.collection` with the object's text: `[{key, score, content}]`, up to `params.top_k` (default 10). */
  "similar.hits": ["object_single"],
  /** The selection's bucket. */
  bucket: ["object_single", "objects_multi", "collection_single", "chunks_multi", "table_single", "none"],
} as const satisfies Readonly<Record<string, readonly string[]>>;

export type ActionBinding = keyof typeof ACTION_BINDINGS;
