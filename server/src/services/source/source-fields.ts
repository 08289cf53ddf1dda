import { Code, ConnectError } from "@connectrpc/connect";
import { Provider } from "../../../../gen/platform/data/source/v1/source_pb.js";
import { providerName, providerWireName } from "./provider-names.js";
import type { ProviderName } from "./source-schema.js";

/** Checks of request fields shared by the methods; every message starts with the field it is about. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 4096;
const MAX_BUCKET_LENGTH = 255;

/** C0 controls and DEL: never part of a name a person types. */
export function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

export function notFound(message: string): ConnectError {
  return new ConnectError(message, Code.NotFound);
}

export function failedPrecondition(message: string): ConnectError {
  return new ConnectError(message, Code.FailedPrecondition);
}

/** A bucket name as the path carries it; which buckets exist is the storage service's to say. */
export function validBucket(bucket: string): string {
  if (bucket === "") throw invalid("bucket is required");
  if (bucket.length > MAX_BUCKET_LENGTH) throw invalid(`bucket is longer than ${MAX_BUCKET_LENGTH} characters`);
  if (bucket.includes("/") || hasControlCharacter(bucket))
    throw invalid("bucket must not contain '/' or control characters");
  return bucket;
}

/** A required id (`field` names it in messages). */
export function validId(value: string, field: string): string {
  if (value === "") throw invalid(`${field} is required`);
  return optionalId(value, field)!;
}

/** An optional id: undefined when empty. Lower-cased, as PostgreSQL prints UUIDs. */
export function optionalId(value: string, field: string): string | undefined {
  if (value === "") return undefined;
  if (!UUID.test(value)) throw invalid(`${field} must be a UUID`);
  return value.toLowerCase();
}

export function validName(name: string, field = "name"): string {
  const trimmed = name.trim();
  if (trimmed === "") throw invalid(`${field} is required`);
  if (name.length > MAX_NAME_LENGTH) throw invalid(`${field} is longer than ${MAX_NAME_LENGTH} characters`);
  if (hasControlCharacter(name)) throw invalid(`${field} must not contain control characters`);
  return trimmed;
}

export function validDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION_LENGTH)
    throw invalid(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`);
  return description;
}

/** A set provider (`provider is required` when unset), by its stored name. */
export function validProvider(provider: Provider, field = "provider"): ProviderName {
  if (provider === Provider.UNSPECIFIED) throw invalid(`${field} is required`);
  const name = providerName(provider);
  if (!name) throw invalid(`${field}: ${providerWireName(provider)} is not a known provider`);
  return name;
}
