import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SecretMetadata, SecretValue } from "../../../../gen/platform/compute/v1/secret_service_pb.js";
import { SecretValueSchema } from "../../../../gen/platform/compute/v1/secret_service_pb.js";
import type { SecretServiceImplementation } from "../../../../gen/platform/compute/v1/secret_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { createSecretStore, type SecretMetadataRow, type SecretType } from "./secret-store.js";

export interface SecretServiceOptions {
  readonly db: Database;
  readonly box: SecretBox;
}

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The secrets service. Values are sealed as binary SecretValue messages, bound to their
 * organization and name; no value is logged, and no error message repeats one.
 */
export function createSecretService({ db, box }: SecretServiceOptions): SecretServiceImplementation {
  const store = createSecretStore(db);

  return {
    async createSecret(request, context) {
      const { orgId } = principalOf(context);
      const name = validName(request.name);
      const type = validValue(request.value);
      const plaintext = toBinary(SecretValueSchema, request.value!);
      const aad = associatedData(orgId, name);
      const metadata = await db.transaction(async (tx) => {
        const slots = createSecretStore(tx);
        const existing = await slots.getForUpdate(orgId, name);
        // "Repeating the call with the same value leaves the same state": a retry does not
        // count as a rotation. A value that no longer opens (the key changed) is simply replaced.
        if (
          existing &&
          existing.type === type &&
          sameBytes(openOrUndefined(box, existing.sealedValue, aad), plaintext)
        ) {
          return existing;
        }
        return slots.upsert(orgId, { name, type, sealedValue: box.seal(plaintext, aad) });
      });
      return { metadata: metadataMessage(metadata) };
    },

    async getSecret(request, context) {
      const { orgId } = principalOf(context);
      const name = validName(request.name);
      const row = await store.get(orgId, name);
      if (!row) throw new ConnectError(`secret "${name}" not found`, Code.NotFound);
      const plaintext = openOrUndefined(box, row.sealedValue, associatedData(orgId, name));
      if (!plaintext) {
        throw new ConnectError(
          `secret "${name}" cannot be opened with the server's secret key (was PLATFORM_SECRET_KEY or the data directory's secret.key replaced?); create it again to replace its value`,
          Code.Internal,
        );
      }
      return { name, value: fromBinary(SecretValueSchema, plaintext), metadata: metadataMessage(row) };
    },

    async listSecrets(_request, context) {
      const { orgId } = principalOf(context);
      const rows = await store.list(orgId);
      return { secrets: rows.map(metadataMessage) };
    },

    async deleteSecret(request, context) {
      const { orgId } = principalOf(context);
      return { deleted: await store.delete(orgId, validName(request.name)) };
    },
  };
}

/**
 * Binds a sealed value to its slot. The separators cannot occur inside either part (a UUID, and a
 * name of letters, digits, `-` and `_`), so no two slots share associated data.
 */
function associatedData(orgId: string, name: string): string {
  return `platform.compute.v1.SecretValue/${orgId}/${name}`;
}

function validName(name: string): string {
  if (name === "") throw invalid("name is required");
  if (!NAME_PATTERN.test(name)) throw invalid("name must be 1 to 64 characters of letters, digits, '-' and '_'");
  return name;
}

/** The slot type of a complete value; the messages name fields but never repeat their contents. */
function validValue(value: SecretValue | undefined): SecretType {
  const credential = value?.value;
  switch (credential?.case) {
    case "gitSecret":
      if (credential.value.username === "") throw invalid("value.git_secret.username is required");
      if (credential.value.token === "") throw invalid("value.git_secret.token is required");
      return "git_secret";
    case "registrySecret":
      if (credential.value.username === "") throw invalid("value.registry_secret.username is required");
      if (credential.value.password === "") throw invalid("value.registry_secret.password is required");
      // server_address is optional: empty means the public default registry.
      return "registry_secret";
    default:
      throw invalid("value is required: set exactly one of value.git_secret or value.registry_secret");
  }
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

function openOrUndefined(box: SecretBox, sealed: Uint8Array, aad: string): Uint8Array | undefined {
  try {
    return box.open(sealed, aad);
  } catch {
    return undefined;
  }
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && Buffer.compare(a, b) === 0;
}

function metadataMessage(
  row: SecretMetadataRow,
): Pick<SecretMetadata, "name" | "type" | "createdAtMs" | "updatedAtMs"> {
  return { name: row.name, type: row.type, createdAtMs: BigInt(row.createdAt), updatedAtMs: BigInt(row.updatedAt) };
}
