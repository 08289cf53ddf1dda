import { runAdminCommand } from "./admin/run-admin-command.js";
import { ConfigError, parseServeConfig, settings } from "./config.js";
import { DataDirInUseError } from "./db/data-dir-lock.js";
import { startServer } from "./server.js";
import { createLogger } from "./log/logger.js";

const usage = `usage:
  platform-server serve [flags]        run every plane of the platform
  platform-server admin <command>      create-org, create-key, revoke-key, rotate-key

serve flags (environment variable, default):
${Object.values(settings)
  .map((s) => `  --${s.flag.padEnd(18)} ${s.env} (${s.fallback || "unset"}): ${s.help}`)
  .join("\n")}
`;

/** The CLI: returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "admin":
      return runAdminCommand(rest, process.env);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(usage);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command "${command}"\n${usage}`);
      return 2;
  }
}

async function serve(argv: readonly string[]): Promise<number> {
  const logger = createLogger();
  let config;
  try {
    config = parseServeConfig(argv, process.env);
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof TypeError)) throw error;
    process.stderr.write(`${error.message}\n${usage}`);
    return 2;
  }
  let server;
  try {
    server = await startServer(config, logger);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  // Signal handlers go in before the ready line: a supervisor may send SIGTERM the moment it
  // reads that line, and without a handler Node would die at once instead of shutting down.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info("stopping", { signal });
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
      resolve();
    };
    const onTerm = () => stop("SIGTERM");
    const onInt = () => stop("SIGINT");
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
  });
  // The one line a supervisor or a test waits for.
  process.stdout.write(JSON.stringify({ ready: true, ...server.urls }) + "\n");
  logger.info("ready", server.urls);
  await stopped;
  await server.close();
  logger.info("stopped");
  return 0;
}
