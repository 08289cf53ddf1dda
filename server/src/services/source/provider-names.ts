import { CredentialType, Provider, SourceStatus } from "../../../../gen/platform/data/source/v1/source_pb.js";
import type { CredentialTypeName, ProviderName } from "./source-schema.js";

/** Between the contract's enums and the names the tables store. */

const providerByName: Record<ProviderName, Provider> = {
  internal: Provider.INTERNAL,
  amazon_s3: Provider.AMAZON_S3,
  google_cloud_storage: Provider.GOOGLE_CLOUD_STORAGE,
  azure_blob_storage: Provider.AZURE_BLOB_STORAGE,
  google_drive: Provider.GOOGLE_DRIVE,
  microsoft_onedrive: Provider.MICROSOFT_ONEDRIVE,
  dropbox: Provider.DROPBOX,
  box: Provider.BOX,
  notion: Provider.NOTION,
  confluence: Provider.CONFLUENCE,
  slack: Provider.SLACK,
  github: Provider.GITHUB,
  web: Provider.WEB,
};

const nameByProvider = new Map<Provider, ProviderName>(
  Object.entries(providerByName).map(([name, value]) => [value, name as ProviderName]),
);

export function providerOf(name: ProviderName): Provider {
  return providerByName[name];
}

/** The stored name of a provider, or undefined for PROVIDER_UNSPECIFIED and unknown numbers. */
export function providerName(provider: Provider): ProviderName | undefined {
  return nameByProvider.get(provider);
}

/** How messages name a provider: `PROVIDER_AMAZON_S3`, the wire name a caller sends. */
export function providerWireName(provider: Provider | ProviderName): string {
  const name = typeof provider === "string" ? provider : providerName(provider);
  return name ? `PROVIDER_${name.toUpperCase()}` : `provider ${String(provider)}`;
}

/** A provider named the way operators write it in configuration: `google_drive` or `PROVIDER_GOOGLE_DRIVE`. */
export function parseProviderName(text: string): ProviderName | undefined {
  const bare = text
    .trim()
    .toLowerCase()
    .replace(/^provider_/, "");
  return bare in providerByName ? (bare as ProviderName) : undefined;
}

const credentialTypeByName: Record<CredentialTypeName, CredentialType> = {
  oauth: CredentialType.OAUTH,
  api_key: CredentialType.API_KEY,
  token: CredentialType.TOKEN,
  access_key: CredentialType.ACCESS_KEY,
};

export function credentialTypeOf(name: CredentialTypeName): CredentialType {
  return credentialTypeByName[name];
}

export function sourceStatusOf(status: "active" | "error"): SourceStatus {
  return status === "active" ? SourceStatus.ACTIVE : SourceStatus.ERROR;
}
