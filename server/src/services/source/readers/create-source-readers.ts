import type { Dispatcher } from "undici";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { Database } from "../../../db/database.js";
import { createGuardedDispatcher } from "../../../net/private-network.js";
import { openCredentialSecret, type CredentialSecret } from "../credential-secret.js";
import { createCredentialStore } from "../credential-store.js";
import { providerWireName } from "../provider-names.js";
import { createSourceStore, type SourceRow } from "../source-store.js";
import { createS3SourceReader } from "./s3-source-reader.js";
import { SourceReadError, type InternalObjects, type SourceReader } from "./source-reader.js";
import { createWebSourceReader } from "./web-source-reader.js";

export interface SourceReadersOptions {
  readonly db: Database;
  /** Opens the credentials sources connect with. */
  readonly box: SecretBox;
  /** The bucket's own objects, from the storage service. */
  readonly objects: InternalObjects;
  /** --allow-private-network: sources may then be on loopback or private addresses. */
  readonly allowPrivateNetwork: boolean;
  /** Carries web requests; default the outbound guard. */
  readonly dispatcher?: Dispatcher;
}

export interface SourceReaders {
  /** The reader of a source of the organization's bucket; SourceReadError `not_found` when there is none. */
  forSource(orgId: string, bucket: string, sourceId: string): Promise<SourceReader>;
  /** Records what the last discovery or sync found: undefined for success, else the reason (never a secret). */
  recordHealth(orgId: string, sourceId: string, error: string | undefined): Promise<void>;
}

/** Readers of sources for the ingestion code: the kind's reader, its credential opened. */
export function createSourceReaders(options: SourceReadersOptions): SourceReaders {
  const sources = createSourceStore(options.db);
  const credentials = createCredentialStore(options.db);
  const dispatcher =
    options.dispatcher ?? createGuardedDispatcher({ allowPrivateNetwork: options.allowPrivateNetwork });

  const secretOf = async (row: SourceRow): Promise<CredentialSecret | undefined> => {
    if (!row.credentialId) return undefined;
    const credential = await credentials.get(row.orgId, row.credentialId);
    if (!credential) return undefined;
    const secret = openCredentialSecret(options.box, row.orgId, credential.id, credential.sealedSecret);
    if (!secret)
      throw new SourceReadError("credential", "the source's credential cannot be opened with the server's secret key");
    return secret;
  };

  return {
    async forSource(orgId, bucket, sourceId) {
      const row = await sources.get(orgId, bucket, sourceId);
      if (!row) throw new SourceReadError("not_found", `source ${sourceId} not found in bucket "${bucket}"`);
      switch (row.provider) {
        case "internal":
          return {
            discover: (signal) => options.objects.list(orgId, bucket, "", signal),
            read: (key, signal) => options.objects.read(orgId, bucket, key, signal),
          };
        case "amazon_s3":
          return createS3SourceReader(row.config, await secretOf(row), {
            allowPrivateNetwork: options.allowPrivateNetwork,
          });
        case "web":
          return createWebSourceReader(row.config, { dispatcher });
        default:
          throw new SourceReadError("unavailable", `${providerWireName(row.provider)} sources have no reader yet`);
      }
    },

    recordHealth: (orgId, sourceId, error) => sources.setHealth(orgId, sourceId, error),
  };
}
