import { isForeignKeyViolation } from "../../db/sql-state.js";
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { SourceSchema } from "../../../../gen/platform/data/source/v1/source_pb.js";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import { createCredentialStore } from "./credential-store.js";
import { providerOf, providerWireName, sourceStatusOf } from "./provider-names.js";
import { sourceKindOf, type SourceKind } from "./source-config.js";
import {
  failedPrecondition,
  invalid,
  notFound,
  optionalId,
  validBucket,
  validDescription,
  validId,
  validName,
  validProvider,
} from "./source-fields.js";
import type { ProviderName } from "./source-schema.js";
import { createSourceStore, INTERNAL_SOURCE_NAME, type SourcePosition, type SourceRow } from "./source-store.js";

export interface SourceMethodsOptions {
  readonly db: Database;
  /** Whether the organization has the bucket; without it every bucket name is taken as existing. */
  readonly bucketExists?: (orgId: string, bucket: string) => Promise<boolean>;
  /** Whether ingest rules still route the source; DeleteSource refuses while they do. */
  readonly sourceInUse?: (orgId: string, bucket: string, sourceId: string) => Promise<boolean>;
}

type SourceMethods = Pick<
  SourceServiceImplementation,
  "createSource" | "getSource" | "listSources" | "updateSource" | "deleteSource"
>;

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

/** Sources CRUD: org- and bucket-scoped; the internal source is listed but never changed here. */
export function createSourceMethods({ db, bucketExists, sourceInUse }: SourceMethodsOptions): SourceMethods {
  const store = createSourceStore(db);
  const credentials = createCredentialStore(db);

  const requireBucket = async (orgId: string, bucket: string) => {
    if (bucketExists && !(await bucketExists(orgId, bucket))) throw notFound(`bucket "${bucket}" not found`);
  };
  const requireSource = async (orgId: string, bucket: string, sourceId: string) => {
    const row = await store.get(orgId, bucket, sourceId);
    if (!row) throw notFound(`source ${sourceId} not found in bucket "${bucket}"`);
    return row;
  };

  /** The credential id to store: checked to exist in the organization and to fit the kind. */
  const checkCredential = async (
    orgId: string,
    provider: ProviderName,
    kind: SourceKind,
    credentialId: string | undefined,
  ): Promise<string | null> => {
    if (kind.credentialTypes.length === 0) {
      if (credentialId !== undefined)
        throw invalid(`credential_id must be empty: ${providerWireName(provider)} takes no credential`);
      return null;
    }
    if (credentialId === undefined) throw invalid(`credential_id is required for ${providerWireName(provider)}`);
    const credential = await credentials.get(orgId, credentialId);
    if (!credential) throw notFound(`credential_id: credential ${credentialId} not found`);
    if (credential.provider !== provider)
      throw invalid(
        `credential_id: the credential is for ${providerWireName(credential.provider)}, not ${providerWireName(provider)}`,
      );
    if (!kind.credentialTypes.includes(credential.type))
      throw invalid(
        `credential_id: ${providerWireName(provider)} connects with credentials of type ${kind.credentialTypes.join(" or ")}, not ${credential.type}`,
      );
    return credentialId;
  };

  return {
    async createSource(request, context) {
      const { orgId } = principalOf(context);
      const bucket = validBucket(request.bucket);
      const name = externalName(request.name);
      const description = validDescription(request.description);
      const provider = validProvider(request.provider);
      if (provider === "internal")
        throw invalid("provider: PROVIDER_INTERNAL sources are created with their bucket, never by a call");
      const kind = sourceKindOf(provider);
      const config = kind.parseConfig(request.config ?? {});
      const credentialId = await checkCredential(
        orgId,
        provider,
        kind,
        optionalId(request.credentialId, "credential_id"),
      );
      await requireBucket(orgId, bucket);
      const created = await withCredentialGone(() =>
        store.insert(orgId, { bucket, name, description, provider, credentialId, config }),
      );
      if (!created)
        throw new ConnectError(`name: a source named "${name}" exists in bucket "${bucket}"`, Code.AlreadyExists);
      return sourceMessage(created);
    },

    async getSource(request, context) {
      const { orgId } = principalOf(context);
      const bucket = validBucket(request.bucket);
      return sourceMessage(await requireSource(orgId, bucket, validId(request.sourceId, "source_id")));
    },

    async listSources(request, context) {
      const { orgId } = principalOf(context);
      const bucket = validBucket(request.bucket);
      await requireBucket(orgId, bucket);
      // The HTTP route returns every source (the specification says so); paging is gRPC's.
      if (isHttpRoute(context)) {
        return { sources: (await store.list(orgId, bucket, {})).map(sourceMessage), nextPageToken: "" };
      }
      if (request.pageSize < 0) throw invalid("page_size must not be negative");
      const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const after = request.pageToken === "" ? undefined : decodePosition(request.pageToken);
      const rows = await store.list(orgId, bucket, { after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        sources: page.map(sourceMessage),
        nextPageToken: rows.length > limit && last ? encodePosition(last) : "",
      };
    },

    async updateSource(request, context) {
      const { orgId } = principalOf(context);
      const bucket = validBucket(request.bucket);
      const sourceId = validId(request.sourceId, "source_id");
      const existing = await requireSource(orgId, bucket, sourceId);
      if (existing.internal) throw failedPrecondition("source_id: the bucket's internal source cannot be updated");
      const kind = sourceKindOf(existing.provider);
      const changes: { name?: string; description?: string; credentialId?: string | null; config?: JsonObject } = {};
      if (request.name !== undefined) changes.name = externalName(request.name);
      if (request.description !== undefined) changes.description = validDescription(request.description);
      if (request.config !== undefined) changes.config = kind.parseConfig(request.config);
      if (request.credentialId !== undefined) {
        changes.credentialId = await checkCredential(
          orgId,
          existing.provider,
          kind,
          optionalId(request.credentialId, "credential_id"),
        );
      }
      if (Object.keys(changes).length === 0) return sourceMessage(existing);
      const updated = await withCredentialGone(() => store.update(orgId, bucket, sourceId, changes));
      if (updated === "taken")
        throw new ConnectError(
          `name: a source named "${changes.name}" exists in bucket "${bucket}"`,
          Code.AlreadyExists,
        );
      if (!updated) throw notFound(`source ${sourceId} not found in bucket "${bucket}"`);
      return sourceMessage(updated);
    },

    async deleteSource(request, context) {
      const { orgId } = principalOf(context);
      const bucket = validBucket(request.bucket);
      const sourceId = validId(request.sourceId, "source_id");
      const existing = await requireSource(orgId, bucket, sourceId);
      if (existing.internal)
        throw failedPrecondition("source_id: the bucket's internal source cannot be deleted; it goes with its bucket");
      if (sourceInUse && (await sourceInUse(orgId, bucket, sourceId)))
        throw failedPrecondition("source_id: ingest rules still reference the source; delete them first");
      if (!(await store.delete(orgId, bucket, sourceId)))
        throw notFound(`source ${sourceId} not found in bucket "${bucket}"`);
      return {};
    },
  };
}

/** A name for an external source: the internal source's name is reserved in every bucket. */
function externalName(name: string): string {
  const valid = validName(name);
  if (valid === INTERNAL_SOURCE_NAME)
    throw invalid(`name "${INTERNAL_SOURCE_NAME}" is reserved for the bucket's internal source`);
  return valid;
}

/** A credential deleted between the check and the write breaks the foreign key: NOT_FOUND, as if the check had seen it. */
async function withCredentialGone<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound("credential_id: credential not found");
    throw error;
  }
}

function isHttpRoute(context: HandlerContext): boolean {
  return context.protocolName === "http";
}

/** The keyset position inside a page token; the edge signs it, so it is the server's own text here. */
function encodePosition(row: SourceRow): string {
  return Buffer.from(JSON.stringify([row.internal, row.createdAt, row.id])).toString("base64url");
}

function decodePosition(token: string): SourcePosition {
  try {
    const [internal, createdAt, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown[];
    if (typeof internal === "boolean" && typeof createdAt === "number" && typeof id === "string")
      return { internal, createdAt, id };
  } catch {
    // Answered below.
  }
  throw invalid("page_token is not a token from a previous ListSources response");
}

export function sourceMessage(row: SourceRow): MessageInitShape<typeof SourceSchema> {
  return {
    sourceId: row.id,
    bucket: row.bucket,
    name: row.name,
    description: row.description,
    provider: providerOf(row.provider),
    credentialId: row.credentialId ?? "",
    config: row.config,
    internal: row.internal,
    status: sourceStatusOf(row.status),
    errorMessage: row.errorMessage,
    createdAt: BigInt(row.createdAt),
    updatedAt: BigInt(row.updatedAt),
  };
}
