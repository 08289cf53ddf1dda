import { Webhook } from "standardwebhooks";

/** What a Standard Webhooks delivery is signed over. */
export interface SignedDelivery {
  /** Stable across retries: receivers deduplicate on it. */
  readonly id: string;
  /** This attempt's time in Unix seconds: receivers refuse stale ones (replay protection). */
  readonly timestamp: number;
  readonly body: string;
}

/**
 * The `webhook-signature` header of Standard Webhooks (standardwebhooks.com, "Signature scheme"):
 * `v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>`, one per key, space-separated, so a
 * receiver holding either key accepts the delivery during a rotation.
 */
export function webhookSignature(delivery: SignedDelivery, keys: readonly Uint8Array[]): string {
  const sentAt = new Date(delivery.timestamp * 1000);
  return keys.map((key) => new Webhook(key, { format: "raw" }).sign(delivery.id, sentAt, delivery.body)).join(" ");
}

/** The three headers of a signed delivery. */
export function webhookHeaders(delivery: SignedDelivery, keys: readonly Uint8Array[]): Record<string, string> {
  return {
    "webhook-id": delivery.id,
    "webhook-timestamp": String(delivery.timestamp),
    "webhook-signature": webhookSignature(delivery, keys),
  };
}
