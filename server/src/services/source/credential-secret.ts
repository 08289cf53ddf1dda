import type { SecretBox } from "../../crypto/secret-box.js";

/** The secret material of a credential, as sealed in its row. Never leaves the server. */
export type CredentialSecret =
  | { readonly kind: "api_key"; readonly apiKey: string }
  | { readonly kind: "token"; readonly token: string }
  | {
      readonly kind: "access_key";
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
      readonly sessionToken?: string;
    }
  | {
      readonly kind: "oauth";
      readonly accessToken: string;
      readonly tokenType: string;
      /** Absent when the provider issued none; refresh then fails until the user reconnects. */
      readonly refreshToken?: string;
    };

/**
 * Binds a sealed secret to its row: a value copied into another credential, or into another
 * organization, does not open. Both parts are UUIDs, so the separator cannot occur inside them.
 */
function associatedData(orgId: string, credentialId: string): string {
  return `platform.data.source.v1.Credential/${orgId}/${credentialId}`;
}

export function sealCredentialSecret(
  box: SecretBox,
  orgId: string,
  credentialId: string,
  secret: CredentialSecret,
): Uint8Array {
  return box.seal(new TextEncoder().encode(JSON.stringify(secret)), associatedData(orgId, credentialId));
}

/** The secret, or undefined when it does not open (the server's key was replaced, or the row was moved). */
export function openCredentialSecret(
  box: SecretBox,
  orgId: string,
  credentialId: string,
  sealed: Uint8Array,
): CredentialSecret | undefined {
  try {
    return JSON.parse(
      new TextDecoder().decode(box.open(sealed, associatedData(orgId, credentialId))),
    ) as CredentialSecret;
  } catch {
    return undefined;
  }
}
