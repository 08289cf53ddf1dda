import { Readable } from "node:stream";
import { GetObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import type { JsonObject } from "@bufbuild/protobuf";
import { privateNetworkErrorOf } from "../../../net/private-network.js";
import type { CredentialSecret } from "../credential-secret.js";
import { checkHost, guardedAgentOptions } from "./guarded-agent-options.js";
import { SourceReadError, type SourceReader } from "./source-reader.js";

/** The settings source-config.ts stored for PROVIDER_AMAZON_S3. */
interface S3Settings {
  readonly bucket: string;
  readonly region: string;
  readonly endpoint?: string;
  readonly prefix: string;
  readonly force_path_style: boolean;
}

export interface S3ReaderOptions {
  readonly allowPrivateNetwork: boolean;
  /** How long one request may take before it is abandoned. */
  readonly requestTimeoutMs?: number;
}

/** Reads an S3 bucket, or any S3-compatible store, with an access key credential. */
export function createS3SourceReader(
  config: JsonObject,
  secret: CredentialSecret | undefined,
  options: S3ReaderOptions,
): SourceReader {
  const settings = config as unknown as S3Settings;
  if (secret?.kind !== "access_key")
    throw new SourceReadError("credential", "the source needs an access key credential");
  if (settings.endpoint) {
    try {
      checkHost(new URL(settings.endpoint), options.allowPrivateNetwork);
    } catch (error) {
      throw new SourceReadError("refused", (error as Error).message);
    }
  }
  const agent = guardedAgentOptions(options.allowPrivateNetwork);
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.force_path_style,
    // Given explicitly, so the SDK never falls back to the server's own (environment, instance
    // metadata): a source reads with its credential or not at all.
    credentials: {
      accessKeyId: secret.accessKeyId,
      secretAccessKey: secret.secretAccessKey,
      ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}),
    },
    maxAttempts: 3,
    requestHandler: {
      requestTimeout: options.requestTimeoutMs ?? 60_000,
      ...(agent ? { httpAgent: agent, httpsAgent: agent } : {}),
    },
  });

  return {
    async *discover(signal) {
      let continuationToken: string | undefined;
      do {
        const page = await call(() =>
          client.send(
            new ListObjectsV2Command({
              Bucket: settings.bucket,
              Prefix: settings.prefix || undefined,
              ContinuationToken: continuationToken,
            }),
            { abortSignal: signal },
          ),
        );
        for (const object of page.Contents ?? []) {
          // Keys ending in "/" are the folder markers consoles create: no content to ingest.
          if (!object.Key || object.Key.endsWith("/")) continue;
          yield {
            key: object.Key,
            size: object.Size,
            etag: object.ETag ?? "",
            version: "",
            // ListObjectsV2 does not carry types; read() gives the stored Content-Type.
            contentType: "",
            lastModified: object.LastModified?.getTime(),
          };
        }
        continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (continuationToken);
    },

    async read(key, signal) {
      if (settings.prefix && !key.startsWith(settings.prefix))
        throw new SourceReadError("not_found", "the key is outside the source's prefix");
      const answer = await call(() =>
        client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }), { abortSignal: signal }),
      );
      if (!(answer.Body instanceof Readable)) throw new SourceReadError("unavailable", "the store answered no body");
      return {
        body: answer.Body,
        size: answer.ContentLength,
        contentType: answer.ContentType ?? "",
        etag: answer.ETag ?? "",
      };
    },
  };
}

/** SDK failures as SourceReadErrors, their messages free of request details. */
async function call<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const refused = privateNetworkErrorOf(error);
    if (refused) throw new SourceReadError("refused", refused.message, { cause: error });
    if (error instanceof S3ServiceException) {
      const status = error.$metadata.httpStatusCode ?? 0;
      if (error.name === "NoSuchKey" || status === 404)
        throw new SourceReadError("not_found", `the store answered ${error.name}`, { cause: error });
      if (status === 401 || status === 403 || /AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch/.test(error.name))
        throw new SourceReadError("credential", `the store refused the credential (${error.name})`, { cause: error });
      throw new SourceReadError("unavailable", `the store answered ${error.name} (HTTP ${status})`, { cause: error });
    }
    throw new SourceReadError("unavailable", "the store could not be reached", { cause: error });
  }
}
