import { Code, ConnectError } from "@connectrpc/connect";
import type { UserStoreDescription } from "./identity-schema.js";

/** A user-store address read: what the pool shows, and the URL to reach it (null for managed). */
export interface UserStoreAddress {
  readonly description: UserStoreDescription;
  /** The `postgres://` URL with its credentials; null for the managed and K3 stores. */
  readonly url: string | null;
}

const K3 = /^k3\+sa:\/\/([^@/\s]+)@([^/:\s]+):([0-9]{1,5})\/([^/\s]+)$/;

/**
 * Reads the admin API's user-store address: `""` (managed), `k3+sa://<sa>@<host>:<port>/<bucket>`
 * or a `postgres://` URL, which must name a database (it becomes the shown `bucket`).
 */
export function parseUserStoreAddress(field: string, value: string): UserStoreAddress {
  if (value === "") return { description: { kind: "managed" }, url: null };
  const k3 = K3.exec(value);
  if (k3) {
    const [, serviceAccount, host, port, bucket] = k3 as unknown as [string, string, string, string, string];
    return { description: { kind: "k3", serviceAccount, host: `${host}:${port}`, bucket }, url: null };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ConnectError(`${field} is not a valid postgres:// URL`, Code.InvalidArgument);
    }
    const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
    if (!url.hostname) throw new ConnectError(`${field} names no host`, Code.InvalidArgument);
    if (!database || database.includes("/"))
      throw new ConnectError(
        `${field} names no database (postgres://user:password@host:port/database)`,
        Code.InvalidArgument,
      );
    return {
      description: { kind: "postgres", host: `${url.hostname}:${url.port || "5432"}`, bucket: database },
      url: value,
    };
  }
  throw new ConnectError(`${field} is neither empty, a k3+sa:// address nor a postgres:// URL`, Code.InvalidArgument);
}

/** Whether two descriptions name the same store (credentials aside). */
export function sameUserStore(a: UserStoreDescription, b: UserStoreDescription): boolean {
  return (
    a.kind === b.kind &&
    (a.host ?? "") === (b.host ?? "") &&
    (a.bucket ?? "") === (b.bucket ?? "") &&
    (a.serviceAccount ?? "") === (b.serviceAccount ?? "")
  );
}
