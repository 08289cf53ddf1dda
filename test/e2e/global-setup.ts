import type { TestProject } from "vitest/node";
import { startPlatformServer, type StartedServer } from "./platform-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URLs of the server every end-to-end file shares. */
    platformUrls: Record<string, string>;
    /** Its data directory, for admin commands. */
    platformDataDir: string;
    /** DATABASE_URL the shared server runs on, when it runs on PostgreSQL. */
    platformDatabaseUrl: string;
  }
}

let server: StartedServer | undefined;

/** One server for all end-to-end files; each test makes organizations of its own with `admin create-org`. */
export async function setup(project: TestProject): Promise<void> {
  server = await startPlatformServer(["--cors-origin", "http://app.example", "--allow-private-network=true"]);
  project.provide("platformUrls", server.urls);
  project.provide("platformDataDir", server.dataDir);
  project.provide("platformDatabaseUrl", server.databaseUrl ?? "");
}

export async function teardown(): Promise<void> {
  const code = await server?.stop();
  if (code !== 0 && code !== null) throw new Error(`the server exited with ${code} on SIGTERM`);
}
