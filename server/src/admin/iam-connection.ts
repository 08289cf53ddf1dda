import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createRouterTransport, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { IamServiceRoutes } from "../../../gen/platform/iam/v1/iam_service_http.js";
import { createIamServiceClient, type IamServiceClient } from "../../../gen/platform/iam/v1/iam_service_client.js";
import { IamService } from "../../../gen/platform/iam/v1/iam_service_pb.js";
import { IamServiceAccess } from "../../../gen/platform/iam/v1/iam_service_server.js";
import { createAuthInterceptor } from "../auth/auth-interceptor.js";
import { ensureOperator, operatorKeyFile, readOperatorKey } from "../auth/operator.js";
import { openDatabase } from "../db/database.js";
import { migrateDatabase } from "../db/migrate.js";
import { createIamService } from "../services/iam/iam-handlers.js";

/** An IAM client acting as the platform operator, and how it reaches the data. */
export interface IamConnection {
  readonly client: IamServiceClient;
  /** `api`: a running server's IAM API; `database`: the database opened in this process. */
  readonly via: "api" | "database";
  close(): Promise<void>;
}

/** What a running server writes to `<dataDir>/server.json` (server.ts owns the writing). */
interface ServerRecord {
  readonly pid: number;
  readonly api: string;
}

/**
 * Connects admin commands to the IAM service as the operator. While a server runs on the data
 * directory (its `server.json` names a live pid) the embedded database belongs to that process,
 * so the commands call its IAM API over Connect JSON. Otherwise they open the database here and
 * call the same IAM handlers, behind the same auth interceptor, through an in-process transport:
 * both ways run one code path from the request on, so they answer alike.
 */
export async function openIamConnection(dataDir: string, databaseUrl: string | undefined): Promise<IamConnection> {
  const server = await runningServer(dataDir);
  if (server) {
    const secret = await readOperatorKey(dataDir);
    if (!secret)
      throw new Error(
        `a server (pid ${server.pid}) runs on ${dataDir} but ${operatorKeyFile(dataDir)} is missing; restart it to rewrite the file`,
      );
    const transport = createConnectTransport({
      baseUrl: server.api,
      httpVersion: "1.1",
      interceptors: [bearer(secret)],
    });
    return { client: createIamServiceClient(transport, { retry: false }), via: "api", close: async () => {} };
  }

  const database = await openDatabase({ dataDir, databaseUrl, maxConnections: 2 });
  try {
    await migrateDatabase(database, () => {});
    await ensureOperator(database.db, dataDir);
    const secret = (await readOperatorKey(dataDir))!;
    const { db } = database;
    const binding = { service: IamService, routes: IamServiceRoutes.routes, access: IamServiceAccess };
    const transport: Transport = createRouterTransport(
      (router) => router.service(IamService, createIamService({ db })),
      {
        router: { interceptors: [createAuthInterceptor({ db, bindings: [binding] })] },
        transport: { interceptors: [bearer(secret)] },
      },
    );
    return {
      client: createIamServiceClient(transport, { retry: false }),
      via: "database",
      close: () => database.close(),
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

function bearer(secret: string): Interceptor {
  return (next) => (request) => {
    request.header.set("authorization", `Bearer ${secret}`);
    return next(request);
  };
}

/** The server recorded in `server.json`, if its process is alive. */
async function runningServer(dataDir: string): Promise<ServerRecord | undefined> {
  let text: string;
  try {
    text = await readFile(join(dataDir, "server.json"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const record = JSON.parse(text) as Partial<ServerRecord>;
  if (!Number.isSafeInteger(record.pid) || typeof record.api !== "string")
    throw new Error(`${join(dataDir, "server.json")} is malformed`);
  return isAlive(record.pid!) ? (record as ServerRecord) : undefined;
}

/** Signal 0 checks existence only; EPERM means the process exists under another user. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
