import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApiKeySchema, type ApiKey } from "../../../gen/platform/iam/v1/iam_pb.js";
import type { IamServiceClient } from "../../../gen/platform/iam/v1/iam_service_client.js";
import { ownerRole } from "../auth/roles.js";
import { openIamConnection } from "./iam-connection.js";

export const adminUsage = `usage:
  platform-server admin create-org NAME
  platform-server admin create-key --org NAME --role ROLE [--role ROLE...] [--name KEY_NAME]
  platform-server admin revoke-key --org NAME KEY_ID
  platform-server admin rotate-key --org NAME KEY_ID

options:
  --data-dir DIR   data directory (PLATFORM_DATA_DIR, default ./.platform); DATABASE_URL selects PostgreSQL
Each command prints one JSON object on stdout. While a server runs on the data directory the
command goes through its IAM API with <data-dir>/operator.key; otherwise it opens the database.
`;

/** Where the command writes; the CLI passes the process streams. */
export interface AdminOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: AdminOutput = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

class UsageError extends Error {}

interface Command {
  readonly options: NonNullable<ParseArgsConfig["options"]>;
  /** Names of the positional arguments, all required. */
  readonly positionals: readonly string[];
  /** Options that must be given. */
  readonly requires: readonly string[];
  run(
    client: IamServiceClient,
    values: Readonly<Record<string, string | string[] | undefined>>,
    positionals: readonly string[],
  ): Promise<JsonValue>;
}

const org = { org: { type: "string" } } as const;

const commands: Readonly<Record<string, Command>> = {
  "create-org": {
    options: {},
    positionals: ["NAME"],
    requires: [],
    async run(client, _values, [name]) {
      const organization = await client.createOrganization({ name: name! });
      const issued = await client
        .createApiKey({ orgId: organization.orgId, name: "owner", roles: [ownerRole] })
        .catch((error: unknown) => {
          throw new Error(
            `organization "${name}" was created, but issuing its owner key failed (${messageOf(error)}); run create-key --org ${name} --role owner`,
          );
        });
      return { organization: { id: organization.orgId, name: organization.name }, apiKey: issued.secret };
    },
  },
  "create-key": {
    options: { ...org, role: { type: "string", multiple: true }, name: { type: "string" } },
    positionals: [],
    requires: ["org", "role"],
    async run(client, values) {
      const roles = values.role as string[];
      const orgId = await organizationId(client, values.org as string);
      const issued = await client.createApiKey({
        orgId,
        name: (values.name as string | undefined) ?? "admin-cli",
        roles,
      });
      return { apiKey: apiKeyJson(issued.apiKey!), secret: issued.secret };
    },
  },
  "revoke-key": {
    options: org,
    positionals: ["KEY_ID"],
    requires: ["org"],
    async run(client, values, [keyId]) {
      const orgId = await organizationId(client, values.org as string);
      return { apiKey: apiKeyJson(await client.revokeApiKey({ orgId, keyId: keyId! })) };
    },
  },
  "rotate-key": {
    options: org,
    positionals: ["KEY_ID"],
    requires: ["org"],
    async run(client, values, [keyId]) {
      const orgId = await organizationId(client, values.org as string);
      const issued = await client.rotateApiKey({ orgId, keyId: keyId! });
      return { apiKey: apiKeyJson(issued.apiKey!), secret: issued.secret };
    },
  },
};

/**
 * `platform-server admin ...`: returns the exit code (0 done, 1 failed, 2 usage). Output is one
 * JSON object on stdout; errors go to stderr.
 */
export async function runAdminCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  output: AdminOutput = processOutput,
): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) {
    if (name === "help" || name === "--help" || name === "-h") {
      output.stdout(adminUsage);
      return 0;
    }
    output.stderr(`${name === undefined ? "missing admin command" : `unknown admin command "${name}"`}\n${adminUsage}`);
    return 2;
  }
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...rest],
      options: { ...command.options, "data-dir": { type: "string" } },
      allowPositionals: true,
      strict: true,
    }));
    if (positionals.length !== command.positionals.length) {
      throw new UsageError(
        `${name} takes ${command.positionals.length === 0 ? "no arguments" : command.positionals.join(" ")}, got ${positionals.length === 0 ? "none" : positionals.join(" ")}`,
      );
    }
    const missing = command.requires.filter((option) => !values[option]);
    if (missing.length > 0)
      throw new UsageError(`${name} needs ${missing.map((option) => `--${option}`).join(" and ")}`);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    output.stderr(`${error.message}\n${adminUsage}`);
    return 2;
  }

  const dataDir = resolve((values["data-dir"] as string | undefined) || env.PLATFORM_DATA_DIR || "./.platform");
  let connection;
  try {
    connection = await openIamConnection(dataDir, env.DATABASE_URL || undefined);
    const result = await command.run(
      connection.client,
      values as Record<string, string | string[] | undefined>,
      positionals,
    );
    output.stdout(JSON.stringify(result) + "\n");
    return 0;
  } catch (error) {
    const unreachable = connection?.via === "api" && error instanceof ConnectError && error.code === Code.Unavailable;
    const hint = unreachable
      ? ` (the server recorded in ${dataDir}/server.json does not answer; remove the file if no server runs)`
      : "";
    output.stderr(`platform-server admin ${name}: ${messageOf(error)}${hint}\n`);
    return 1;
  } finally {
    await connection?.close();
  }
}

/** The id of an organization by name; the operator's listing covers every organization. */
async function organizationId(client: IamServiceClient, name: string): Promise<string> {
  for await (const organization of client.listOrganizationsAll({ pageSize: 200 })) {
    if (organization.name === name) return organization.orgId;
  }
  throw new ConnectError(`organization "${name}" not found`, Code.NotFound);
}

/** Every field written, as the HTTP routes do, so both paths print the same keys. */
function apiKeyJson(key: ApiKey): JsonValue {
  return toJson(ApiKeySchema, key, { alwaysEmitImplicit: true });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
