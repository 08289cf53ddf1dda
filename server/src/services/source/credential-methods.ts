import { isForeignKeyViolation } from "../../db/sql-state.js";
import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CredentialSchema } from "../../../../gen/platform/data/source/v1/source_pb.js";
import { Provider } from "../../../../gen/platform/data/source/v1/source_pb.js";
import type { StoreCredentialRequest } from "../../../../gen/platform/data/source/v1/source_service_pb.js";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import { sealCredentialSecret, type CredentialSecret } from "./credential-secret.js";
import { createCredentialStore, type CredentialMetadataRow } from "./credential-store.js";
import { credentialTypeOf, providerOf, providerWireName } from "./provider-names.js";
import { invalid, notFound, optionalId, validId, validName, validProvider } from "./source-fields.js";
import type { CredentialTypeName, ProviderName } from "./source-schema.js";
import { createSourceStore } from "./source-store.js";

export interface CredentialMethodsOptions {
  readonly db: Database;
  readonly box: SecretBox;
}

type CredentialMethods = Pick<SourceServiceImplementation, "storeCredential" | "listCredentials" | "deleteCredential">;

/** Longest secret value accepted; real keys and tokens are far shorter. */
const MAX_SECRET_LENGTH = 16 * 1024;

/** Providers that read without a credential: storing one for them is refused. */
const WITHOUT_CREDENTIAL: readonly ProviderName[] = ["internal", "web"];

/** Credentials: sealed at rest, metadata only in every answer. */
export function createCredentialMethods({ db, box }: CredentialMethodsOptions): CredentialMethods {
  const credentials = createCredentialStore(db);

  return {
    async storeCredential(request, context) {
      const { orgId } = principalOf(context);
      const name = validName(request.name);
      const provider = validProvider(request.provider);
      if (WITHOUT_CREDENTIAL.includes(provider))
        throw invalid(`provider: ${providerWireName(provider)} takes no credential`);
      const sourceId = await checkSourceFor(db, orgId, provider, optionalId(request.sourceId, "source_id"));
      const { type, secret } = secretOf(request.secret);
      const id = randomUUID();
      const created = await credentials
        .insert(orgId, {
          id,
          name,
          provider,
          type,
          sourceId: sourceId ?? null,
          scopes: [],
          expiresAt: 0,
          sealedSecret: sealCredentialSecret(box, orgId, id, secret),
        })
        .catch((error: unknown) => {
          // The source was deleted between the check and the write.
          if (isForeignKeyViolation(error)) throw notFound(`source_id: source ${sourceId} not found`);
          throw error;
        });
      return credentialMessage(created);
    },

    async listCredentials(request, context) {
      const { orgId } = principalOf(context);
      const sourceId = optionalId(request.sourceId, "source_id");
      const provider = request.provider === Provider.UNSPECIFIED ? undefined : validProvider(request.provider);
      const rows = await credentials.list(orgId, { sourceId, provider });
      return { credentials: rows.map(credentialMessage) };
    },

    async deleteCredential(request, context) {
      const { orgId } = principalOf(context);
      const credentialId = validId(request.credentialId, "credential_id");
      if (!(await credentials.delete(orgId, credentialId))) throw notFound(`credential ${credentialId} not found`);
      return {};
    },
  };
}

/**
 * The source a credential is stored for: it must be the organization's (any bucket) and read from
 * the same provider. Undefined when none is named.
 */
export async function checkSourceFor(
  db: Database,
  orgId: string,
  provider: ProviderName,
  sourceId: string | undefined,
): Promise<string | undefined> {
  if (sourceId === undefined) return undefined;
  const source = await createSourceStore(db).getAnyBucket(orgId, sourceId);
  if (!source) throw notFound(`source_id: source ${sourceId} not found`);
  if (source.provider !== provider)
    throw invalid(
      `source_id: the source reads ${providerWireName(source.provider)}, not ${providerWireName(provider)}`,
    );
  return sourceId;
}

/** The secret of a StoreCredential request; messages name fields and never repeat a value. */
function secretOf(secret: StoreCredentialRequest["secret"]): { type: CredentialTypeName; secret: CredentialSecret } {
  switch (secret.case) {
    case "apiKey":
      return { type: "api_key", secret: { kind: "api_key", apiKey: secretText(secret.value, "api_key") } };
    case "token":
      return { type: "token", secret: { kind: "token", token: secretText(secret.value, "token") } };
    case "accessKey": {
      const { accessKeyId, secretAccessKey, sessionToken } = secret.value;
      return {
        type: "access_key",
        secret: {
          kind: "access_key",
          accessKeyId: secretText(accessKeyId, "access_key.access_key_id"),
          secretAccessKey: secretText(secretAccessKey, "access_key.secret_access_key"),
          ...(sessionToken ? { sessionToken: secretText(sessionToken, "access_key.session_token") } : {}),
        },
      };
    }
    default:
      throw invalid("secret is required: set exactly one of api_key, token or access_key");
  }
}

function secretText(value: string, field: string): string {
  if (value.trim() === "") throw invalid(`${field} is required`);
  if (value.length > MAX_SECRET_LENGTH) throw invalid(`${field} is longer than ${MAX_SECRET_LENGTH} characters`);
  return value;
}

export function credentialMessage(row: CredentialMetadataRow): MessageInitShape<typeof CredentialSchema> {
  return {
    credentialId: row.id,
    name: row.name,
    provider: providerOf(row.provider),
    type: credentialTypeOf(row.type),
    sourceId: row.sourceId ?? "",
    scopes: row.scopes,
    expiresAt: BigInt(row.expiresAt),
    createdAt: BigInt(row.createdAt),
    updatedAt: BigInt(row.updatedAt),
  };
}
