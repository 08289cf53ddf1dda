import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { parseTrustedProxies } from "../../../net/client-address.js";
import { createLogger } from "../../../log/logger.js";
import { hashPassword } from "../password-hashing.js";
import { openIdentityTestFixture, type IdentityTestFixture } from "../identity-test-fixture.js";
import { createLoginTransactions } from "../login-transactions.js";
import { createIdentityServices, poolContext, type IdentityServices, type PoolContext } from "../pool-context.js";
import type { PoolRecord } from "../pool-store.js";
import type { IssuerDeps } from "./issuer-context.js";
import { createIssuerFront } from "./issuer-cors.js";
import { createIssuerHandler } from "./issuer-handler.js";
import { createRateLimiter } from "./rate-limiter.js";

export const TEST_REDIRECT_URI = "https://app.example/callback";
export const TEST_PASSWORD = "correct horse battery";

export interface TestIssuerPool {
  readonly orgName: string;
  readonly record: PoolRecord;
  /** `{identity_url}/{org}/{pool}` of the test listener. */
  readonly issuer: string;
  context(): PoolContext;
}

export interface IssuerAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body when it is JSON, else `{}`. */
  readonly json: Record<string, unknown>;
}

export interface IssuerTestPlane {
  readonly fixture: IdentityTestFixture;
  readonly services: IdentityServices;
  /** What the plane's issuer runs on, for the pieces the listener wires beside it (mail composing). */
  readonly deps: IssuerDeps;
  /** Moves the clock every issuer component reads. */
  advance(ms: number): void;
  /** Pools whose user store answers as locked for a migration. */
  readonly locked: Set<string>;
  pool(documents?: {
    readonly settings?: object;
    readonly policies?: object;
    readonly branding?: object;
    readonly displayName?: string;
  }): Promise<TestIssuerPool>;
  user(
    pool: TestIssuerPool,
    input?: { readonly email?: string; readonly emailVerified?: boolean },
  ): Promise<{ readonly id: string; readonly email: string }>;
  request(
    method: string,
    url: string,
    options?: {
      readonly form?: Record<string, string>;
      readonly json?: unknown;
      readonly headers?: Record<string, string>;
    },
  ): Promise<IssuerAnswer>;
  close(): Promise<void>;
}

/** The issuer plane served over HTTP on a test database with a clock the test moves, for handler tests. */
export async function openIssuerTestPlane(): Promise<IssuerTestPlane> {
  const fixture = await openIdentityTestFixture();
  let clock = Date.now();
  const now = () => clock;
  const logger = createLogger(() => {});
  const services = createIdentityServices(fixture.database.db, fixture.box, { logger, now });
  const locked = new Set<string>();
  let base = "";
  const deps: IssuerDeps = {
    services,
    transactions: createLoginTransactions(services.db, services.codes, { now }),
    limiter: createRateLimiter(services.db, { now }),
    identityUrl: () => base,
    lockedForMigration: (record) => (locked.has(record.id) ? { retryAfterSeconds: 2 } : undefined),
  };
  const issuer = createIssuerHandler(deps, {
    readMaxBytes: 1 << 20,
    onUnexpectedError: (error) => {
      throw error;
    },
  });
  // The test's own address is a trusted proxy, so a test names client addresses with X-Forwarded-For.
  const front = createIssuerFront(deps, issuer.nodeHandler(), {
    trustedProxies: parseTrustedProxies("127.0.0.1,::1"),
    onError: () => {},
  });
  const server: Server = createServer(front);
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    fixture,
    services,
    deps,
    locked,
    advance: (ms) => (clock += ms),
    async pool(documents = {}) {
      const orgName = `org-${Math.random().toString(36).slice(2, 10)}`;
      const orgId = await fixture.database.createOrganization(orgName);
      await fixture.pools.create(orgId, { name: "app" });
      const record = (await fixture.pools.update(orgId, "app", {
        settings: { redirect_uris: [TEST_REDIRECT_URI], ...documents.settings },
        policies: { cors_allowed_origins: ["https://app.example"], ...documents.policies },
        branding: { ...documents.branding },
        ...(documents.displayName === undefined ? {} : { displayName: documents.displayName }),
      }))!;
      return {
        orgName,
        record,
        issuer: `${base}/${orgName}/app`,
        context: () => poolContext(services, base, orgName, record),
      };
    },
    async user(pool, input = {}) {
      const email = input.email ?? `u-${Math.random().toString(36).slice(2, 10)}@example.com`;
      const user = await pool.context().users.create({
        email,
        passwordHash: await hashPassword(TEST_PASSWORD),
        emailVerified: input.emailVerified ?? false,
      });
      return { id: user.id, email };
    },
    async request(method, url, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | undefined;
      if (options.form) {
        headers["content-type"] = "application/x-www-form-urlencoded";
        body = new URLSearchParams(options.form).toString();
      } else if (options.json !== undefined) {
        headers["content-type"] = "application/json";
        body = JSON.stringify(options.json);
      }
      const response = await fetch(url, {
        method,
        headers,
        redirect: "manual",
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.text();
      const json =
        (response.headers.get("content-type") ?? "").startsWith("application/json") && text
          ? (JSON.parse(text) as Record<string, unknown>)
          : {};
      return { status: response.status, headers: response.headers, text, json };
    },
    async close() {
      server.close();
      await fixture.close();
    },
  };
}
