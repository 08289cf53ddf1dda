// What the HTTP route's own path costs per call, in process and without sockets or a database: an
// authenticated GetEnvVar through the api plane's handler (request id, access log line, router,
// transcoding, the interceptors with the credential cache, a stub implementation answering at
// once) against the raw equivalent (the same authentication, the same answer by hand). Requests
// and responses are stand-ins for node's, so what is timed is JavaScript and garbage collection
// only: the figure the HTTP route adds to a call whatever its database and network.
// CPU time of this process per call, median and best of 7 rounds.
// Run: npx tsx bench/http-route-overhead.bench.ts [calls-per-round=20000] [concurrency=16]
import { EventEmitter, setMaxListeners } from "node:events";
import { createServiceRouter, type NodeRequest, type NodeResponse } from "@platform/codegen/runtime/server";
import { registerScriptService } from "../gen/platform/script/v1/script_service_server.js";
import { authenticate, createAuthInterceptor } from "../server/src/auth/auth-interceptor.js";
import { organizations } from "../server/src/auth/auth-schema.js";
import { createCredentialCache } from "../server/src/auth/credential-cache.js";
import { principalOf } from "../server/src/auth/principal.js";
import { openDatabase } from "../server/src/db/database.js";
import { migrateDatabase } from "../server/src/db/migrate.js";
import { createLogger } from "../server/src/log/logger.js";
import { createIamStore } from "../server/src/services/iam/iam-store.js";
import { createPlaneHandler } from "../server/src/transport/plane-handler.js";

const [calls = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);

const database = await openDatabase({ dataDir: "memory://" });
await migrateDatabase(database, () => {});
const { db } = database;
const [org] = await db.insert(organizations).values({ name: "bench" }).returning();
const issued = await createIamStore(db).createApiKey(org!.id, { name: "bench", roles: ["owner"], expiresAt: 0 });
// No change arrives here: a key verified once stays for the whole run.
const credentials = createCredentialCache({ ttlMs: Number.MAX_SAFE_INTEGER });
const shutdown = new AbortController();
setMaxListeners(0, shutdown.signal);
const router = createServiceRouter({
  interceptors: [createAuthInterceptor({ db, bindings: () => router.bindings, credentials })],
  shutdownSignal: shutdown.signal,
});
registerScriptService(router, {
  getEnvVar(request, context) {
    principalOf(context);
    return { key: request.key, value: "eu-west" };
  },
});
const plane = createPlaneHandler({
  plane: "api",
  handler: router.nodeHandler(),
  corsOrigins: [],
  maxBodyBytes: 16 * 1024 * 1024,
  logger: createLogger(() => {}),
  readiness: () => "ready",
});

/** The parts of node's ServerResponse the plane and the route use; closes on the next turn after `end`. */
class StandInResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  readonly #headers = new Map<string, unknown>();
  constructor(private readonly closed: (response: StandInResponse) => void) {
    super();
  }
  setHeader(name: string, value: unknown) {
    this.#headers.set(name.toLowerCase(), value);
    return this;
  }
  getHeader(name: string) {
    return this.#headers.get(name.toLowerCase());
  }
  writeHead(status: number, headers: Record<string, unknown> = {}) {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    this.headersSent = true;
    return this;
  }
  end(_body?: unknown) {
    this.headersSent = this.writableEnded = this.writableFinished = true;
    setImmediate(() => {
      this.emit("finish");
      this.emit("close");
      this.closed(this);
    });
    return this;
  }
  destroy() {
    this.closed(this);
  }
}

function standInRequest(): NodeRequest {
  return Object.assign(new EventEmitter(), {
    method: "GET",
    url: "/v1/script/env/REGION",
    httpVersionMajor: 1,
    headers: {
      host: "127.0.0.1:8080",
      connection: "keep-alive",
      authorization: `Bearer ${issued.secret}`,
      "x-organization-name": "bench",
    },
  }) as unknown as NodeRequest;
}

const viaRoute = () =>
  new Promise<StandInResponse>((resolve) =>
    plane(standInRequest(), new StandInResponse(resolve) as unknown as NodeResponse),
  );
const viaRaw = () =>
  new Promise<StandInResponse>((resolve) => {
    const request = standInRequest();
    const response = new StandInResponse(resolve);
    const key = decodeURIComponent((request.url ?? "").split("/").pop() ?? "");
    authenticate(db, (request.headers.authorization as string | undefined) ?? null, credentials).then(
      () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ key, value: "eu-west" }));
      },
      () => {
        response.writeHead(500);
        response.end();
      },
    );
  });

const first = await viaRoute();
if (first.statusCode !== 200) throw new Error(`the route answered ${first.statusCode}`);

/** CPU time of this process per call, in microseconds. */
async function round(call: () => Promise<StandInResponse>): Promise<number> {
  const before = process.cpuUsage();
  let left = calls;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await call();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

// Warm-up, then the rounds, the two interleaved.
for (let i = 0; i < 2; i++) {
  await round(viaRoute);
  await round(viaRaw);
}
const route: number[] = [];
const raw: number[] = [];
for (let i = 0; i < 7; i++) {
  route.push(await round(viaRoute));
  raw.push(await round(viaRaw));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const best = (values: number[]) => Math.min(...values);
console.log(`Authenticated GetEnvVar in process, ${calls} calls per round, ${concurrency} at a time (CPU µs per call)`);
console.log(`HTTP route, stub handler   median ${median(route).toFixed(1)}  best ${best(route).toFixed(1)}`);
console.log(`raw equivalent             median ${median(raw).toFixed(1)}  best ${best(raw).toFixed(1)}`);
console.log(
  `what the route adds        median ${(median(route) - median(raw)).toFixed(1)}  best ${(best(route) - best(raw)).toFixed(1)}`,
);
await database.close();
