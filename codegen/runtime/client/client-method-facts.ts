/**
 * What the generator records about each RPC for the SDK, so retries, pagination and streams need
 * no hand-written lists. Field names are local (camelCase) names of the generated messages.
 */
export interface ClientMethodFacts {
  readonly kind: "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";
  /** From the method's `idempotency_level`: only these are retried after a failure. */
  readonly idempotency: "no-side-effects" | "idempotent" | "unknown";
  readonly pagination?: {
    readonly pageToken: string;
    readonly nextPageToken: string;
    readonly items: string;
    readonly pageSize?: string;
  };
  readonly streamFraming?: "sse" | "ndjson";
}
