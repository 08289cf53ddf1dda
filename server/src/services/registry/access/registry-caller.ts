/** Who is calling the registry: an organization's API key (directly or through a token), or nobody. */
export type RegistryCaller =
  | {
      readonly kind: "key";
      readonly orgId: string;
      readonly orgName: string;
      readonly keyId: string;
      readonly roles: ReadonlySet<string>;
      /** Present when the caller came with a registry token: the repository actions it was granted. */
      readonly tokenScopes?: ReadonlyMap<string, ReadonlySet<string>>;
    }
  | {
      readonly kind: "anonymous";
      /** Present when an anonymous caller came with a registry token (public pulls only). */
      readonly tokenScopes?: ReadonlyMap<string, ReadonlySet<string>>;
    };
