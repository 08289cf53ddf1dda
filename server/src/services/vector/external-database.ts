import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import postgres from "postgres";
import { privateAddressKind, privateHostKind } from "../../net/private-network.js";
import { postgresExecutor } from "./engine/sql-executor.js";
import type { VectorConnection } from "./vector-db-host.js";

/** Where an external engine connects, and as whom. */
export interface ExternalTarget {
  readonly endpoint: string;
  readonly port: number;
  readonly dbName: string;
  readonly user: string;
  readonly password: string;
}

export interface ExternalOptions {
  /** The operator's --allow-private-network: loopback and private endpoints are allowed. */
  readonly allowPrivateNetwork: boolean;
  /** Name resolution; tests pass their own. */
  readonly resolve?: (host: string) => Promise<string[]>;
  readonly connectTimeoutSeconds?: number;
  readonly maxConnections?: number;
}

/** A DNS name or an IP literal (IPv6 with or without brackets); anything else is refused before any lookup. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

const resolveAll = async (host: string) => (await lookup(host, { all: true })).map((entry) => entry.address);

/** Checks the request's connection values; INVALID_ARGUMENT names the field. */
export function checkedTarget(input: ExternalTarget): ExternalTarget {
  const endpoint = input.endpoint.trim().replace(/^\[(.*)\]$/, "$1");
  if (endpoint === "") throw invalid("vectordb_endpoint is required in external mode");
  if (isIP(endpoint) === 0 && !HOST_NAME.test(endpoint))
    throw invalid("vectordb_endpoint must be a host name or an IP address (no scheme, port or path)");
  if (!Number.isInteger(input.port) || input.port < 1 || input.port > 65535)
    throw invalid("vectordb_port must be from 1 to 65535 in external mode");
  if (input.dbName === "") throw invalid("vectordb_db_name is required in external mode");
  if (input.dbName.length > 63) throw invalid("vectordb_db_name must be at most 63 characters");
  if (input.user === "") throw invalid("vectordb_user is required in external mode");
  if (input.user.length > 63) throw invalid("vectordb_user must be at most 63 characters");
  return { ...input, endpoint };
}

/**
 * The address the server connects to: the endpoint's own when it is an IP literal, else the first
 * of its resolved addresses. Refused (INVALID_ARGUMENT on vectordb_endpoint) when the endpoint is a
 * loopback, private or otherwise non-public address, or a name with any such address, unless the
 * operator allows private networks. Connecting to the checked address, not the name again, leaves
 * no window for the name to resolve elsewhere in between.
 */
export async function allowedAddress(endpoint: string, options: ExternalOptions): Promise<string> {
  if (!options.allowPrivateNetwork) {
    const why = privateHostKind(endpoint);
    if (why !== undefined) throw refused(endpoint, why);
  }
  if (isIP(endpoint) !== 0) return endpoint;
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? resolveAll)(endpoint);
  } catch {
    throw new ConnectError(`vectordb_endpoint ${endpoint} does not resolve`, Code.FailedPrecondition);
  }
  if (addresses.length === 0)
    throw new ConnectError(`vectordb_endpoint ${endpoint} does not resolve`, Code.FailedPrecondition);
  if (!options.allowPrivateNetwork) {
    for (const address of addresses) {
      const why = privateAddressKind(address);
      if (why !== undefined) throw refused(`${endpoint} (${address})`, why);
    }
  }
  return addresses[0] as string;
}

/** Opens a pool on the external database (no statement is sent yet). */
export function openExternal(target: ExternalTarget, address: string, options: ExternalOptions): VectorConnection {
  const client = postgres({
    host: address,
    port: target.port,
    database: target.dbName,
    username: target.user,
    password: target.password,
    // TLS when the server offers it, plain otherwise (the server name is not verified).
    ssl: "prefer",
    max: options.maxConnections ?? 4,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    idle_timeout: 60,
    onnotice: () => {},
  });
  return { executor: postgresExecutor(client), close: () => client.end({ timeout: 5 }) };
}

/**
 * Connects and makes sure pgvector is there (creating the extension when the user may), so a
 * misconfigured engine is refused by ConfigureEngine instead of failing the first ingest.
 * FAILED_PRECONDITION with a message the caller can act on; no SQL or server detail beyond it.
 */
export async function checkExternal(target: ExternalTarget, options: ExternalOptions): Promise<void> {
  const address = await allowedAddress(target.endpoint, options);
  const connection = openExternal(target, address, { ...options, maxConnections: 1 });
  try {
    await connection.executor.query("SELECT 1");
    const [installed] = await connection.executor.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'",
    );
    if ((installed?.n ?? 0) === 0) {
      try {
        await connection.executor.query("CREATE EXTENSION IF NOT EXISTS vector");
      } catch {
        throw new ConnectError(
          `the vector extension (pgvector) is not installed in database ${target.dbName}, and user ${target.user} may not create it: run CREATE EXTENSION vector there first`,
          Code.FailedPrecondition,
        );
      }
    }
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    throw new ConnectError(connectionFailure(error, target), Code.FailedPrecondition);
  } finally {
    await connection.close().catch(() => {});
  }
}

/** What went wrong reaching an external database, in words that name what to fix. */
export function connectionFailure(error: unknown, target: ExternalTarget): string {
  const code = (error as { code?: unknown }).code;
  const where = `${target.endpoint}:${target.port}`;
  switch (code) {
    case "ECONNREFUSED":
      return `cannot reach the vector database at ${where}: connection refused`;
    case "CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `cannot reach the vector database at ${where}: the connection timed out`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `cannot reach the vector database at ${where}: no route to host`;
    case "28P01":
    case "28000":
      return `the vector database at ${where} refused the sign-in of user ${target.user}`;
    case "3D000":
      return `database ${target.dbName} does not exist on ${where}`;
    case "42501":
      return `user ${target.user} lacks a privilege it needs in database ${target.dbName}`;
    default:
      return `cannot use the vector database at ${where}`;
  }
}

function refused(host: string, why: string): ConnectError {
  return invalid(
    `vectordb_endpoint ${host} is ${why}, which this server does not connect to (the operator allows private networks with --allow-private-network)`,
  );
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** Errors of a database that cannot be reached or signed in to, as postgres-js and the socket report them. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "28P01",
  "28000",
  "3D000",
]);

/**
 * A failure to reach an engine's database as UNAVAILABLE naming the bucket (a caller can retry, or
 * fix the engine), instead of an internal error; anything else is passed on unchanged.
 */
export function unreachableAsUnavailable(error: unknown, bucket: string): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof ConnectError || typeof code !== "string" || !UNREACHABLE.has(code)) return error;
  return new ConnectError(`the vector database of bucket ${bucket} cannot be reached`, Code.Unavailable);
}
