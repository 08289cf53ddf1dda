// The server side of get-env-var.bench.ts: the real api plane (listener, router, auth with the
// credential cache following change notices, as server.ts wires it, script service); on a second
// port the same plane with the key read from the database on every call (how every call was
// authenticated before the cache: the baseline); and on a third port a raw node:http JSON handler
// doing the same work by hand (the same bearer-key authentication, through the same cache, and the
// same store read) with no routing, transcoding or Connect protocol. The raw handler also serves
// /uncached/KEY, the same with the key read on every call. A fourth port serves the plane with the interceptor as it was before the
// cache (bench/auth-interceptor-before-cache.ts): today's baseline in the same run.
// Prints the ports and a token on stdout, then serves until killed.
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { registerScriptService } from "../gen/platform/script/v1/script_service_server.js";
import { authenticate, createAuthInterceptor } from "../server/src/auth/auth-interceptor.js";
import { createAuthInterceptor as createAuthInterceptorBeforeCache } from "./auth-interceptor-before-cache.js";
import { createCredentialCache } from "../server/src/auth/credential-cache.js";
import { followCredentialChanges } from "../server/src/auth/credential-changes.js";
import { ensureOperator } from "../server/src/auth/operator.js";
import { openDatabase } from "../server/src/db/database.js";
import { migrateDatabase } from "../server/src/db/migrate.js";
import { organizations } from "../server/src/auth/auth-schema.js";
import { createIamStore } from "../server/src/services/iam/iam-store.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../server/src/crypto/secret-box.js";
import { createEnvStore } from "../server/src/services/script/env-store.js";
import { createScriptService } from "../server/src/services/script/script-handlers.js";
import { createToolRegistry } from "../server/src/services/script/tools/tool-registry.js";
import { listenPlane } from "../server/src/transport/listen-plane.js";
import { createLogger } from "../server/src/log/logger.js";

const dataDir = await mkdtemp(join(tmpdir(), "bench-"));
const database = await openDatabase({ dataDir: "memory://", databaseUrl: process.env.DATABASE_URL });
await migrateDatabase(database, () => {});
const { db } = database;
await ensureOperator(db, dataDir);
const [org] = await db.insert(organizations).values({ name: "bench" }).returning();
const iam = createIamStore(db);
const issued = await iam.createApiKey(org!.id, { name: "bench", roles: ["owner"], expiresAt: 0 });
const box = createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
const env = createEnvStore(db, box);
await env.setEnvVar(org!.id, "REGION", "eu-west");
const credentials = createCredentialCache();
await followCredentialChanges(database, credentials);

/**
 * The api plane as server.ts builds it: "cached" authenticates through the credential cache,
 * "per-call" reads the key on every call (prepared), "before" is the interceptor as it was
 * before the cache (the key read on every call through drizzle's builder).
 */
async function apiPlane(auth: "cached" | "per-call" | "before") {
  const shutdown = new AbortController();
  // As server.ts does: every call in progress holds one listener on it (none once it ends), so 16
  // connections are 16 listeners at once, past Node's warning threshold of 10.
  setMaxListeners(0, shutdown.signal);
  const router = createServiceRouter({
    interceptors: [
      auth === "before"
        ? createAuthInterceptorBeforeCache({ db, bindings: () => router.bindings })
        : createAuthInterceptor({ db, bindings: () => router.bindings, ...(auth === "cached" ? { credentials } : {}) }),
    ],
    shutdownSignal: shutdown.signal,
  });
  registerScriptService(
    router,
    createScriptService({ db, box, version: "bench", startedAt: Date.now(), tools: createToolRegistry([]) }),
  );
  return listenPlane({
    name: "api",
    host: "127.0.0.1",
    port: 0,
    handler: router.nodeHandler(),
    corsOrigins: [],
    maxBodyBytes: 16 * 1024 * 1024,
    logger: createLogger(() => {}),
    isReady: () => true,
    shutdownController: shutdown,
  });
}
const plane = await apiPlane("cached");
const uncachedPlane = await apiPlane("per-call");
const beforePlane = await apiPlane("before");

const raw = http.createServer((req, res) => {
  // The server process's CPU time so far, for the bench to charge each round's requests with.
  if (req.url === "/cpu") {
    const { user, system } = process.cpuUsage();
    return void res.end(JSON.stringify({ micros: user + system }));
  }
  const key = decodeURIComponent((req.url ?? "").split("/").pop() ?? "");
  const url = req.url ?? "";
  authenticate(db, req.headers.authorization ?? null, url.startsWith("/env/") ? credentials : undefined)
    .then((principal) => env.getEnvVar(principal.orgId, key))
    .then(
      (value) => {
        res.writeHead(value === undefined ? 404 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify(value === undefined ? { code: "not_found" } : { key, value }));
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
});
await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));

process.stdout.write(
  JSON.stringify({
    api: plane.url,
    uncachedApi: uncachedPlane.url,
    beforeApi: beforePlane.url,
    raw: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`,
    token: issued.secret,
    organization: "bench",
  }) + "\n",
);
