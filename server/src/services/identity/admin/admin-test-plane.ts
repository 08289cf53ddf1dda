import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CredentialCache } from "../../../auth/credential-cache.js";
import { createLogger } from "../../../log/logger.js";
import { createIamStore } from "../../iam/iam-store.js";
import { openIdentityTestFixture, type IdentityTestFixture } from "../identity-test-fixture.js";
import { createIdentityServices, type IdentityServices } from "../pool-context.js";
import type { UserStoreConnection } from "../postgres-user-store.js";
import { createPageTokenSigner } from "../../../pagination/page-token-signer.js";
import { createIdentityAdminPlane } from "./identity-admin-plane.js";

/** An organization of the test database and an API key of it. */
export interface TestCaller {
  readonly orgId: string;
  readonly orgName: string;
  readonly headers: Record<string, string>;
}

export interface AdminTestPlane {
  readonly fixture: IdentityTestFixture;
  readonly services: IdentityServices;
  /** A new organization with a key holding `roles`. */
  caller(roles?: readonly string[]): Promise<TestCaller>;
  /** Another key of the same organization. */
  keyOf(caller: TestCaller, roles: readonly string[]): Promise<Record<string, string>>;
  request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export const TEST_IDENTITY_URL = "https://id.example";

/** The admin plane over HTTP on a test database, as the api listener serves it, for handler tests. */
export async function openAdminTestPlane(
  options: {
    readonly connectUserStore?: ((url: string) => UserStoreConnection) | undefined;
    /** The credential cache the plane authenticates through, as `serve` wires it; none by default. */
    readonly credentials?: CredentialCache;
  } = {},
): Promise<AdminTestPlane> {
  const fixture = await openIdentityTestFixture();
  const logger = createLogger();
  const services = createIdentityServices(fixture.database.db, fixture.box, {
    logger,
    ...(options.connectUserStore ? { connectUserStore: options.connectUserStore } : {}),
  });
  const pageTokens = createPageTokenSigner(randomBytes(32));
  const plane = createIdentityAdminPlane(
    { services, pools: fixture.pools, identityUrl: () => TEST_IDENTITY_URL },
    { logger, readMaxBytes: 1 << 20, pageTokens, ...(options.credentials ? { credentials: options.credentials } : {}) },
  );
  const server: Server = createServer(plane.nodeHandler());
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/identity`;
  const iam = createIamStore(fixture.database.db);
  const keyHeaders = async (orgId: string, roles: readonly string[]) => {
    const { secret } = await iam.createApiKey(orgId, { name: "test", roles, expiresAt: 0 });
    return { authorization: `Bearer ${secret}` };
  };
  return {
    fixture,
    services,
    async caller(roles = ["identity.admin"]) {
      const orgName = `org-${Math.random().toString(36).slice(2, 10)}`;
      const orgId = await fixture.database.createOrganization(orgName);
      return { orgId, orgName, headers: await keyHeaders(orgId, roles) };
    },
    keyOf: (caller, roles) => keyHeaders(caller.orgId, roles),
    async request(method, path, headers, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    },
    async close() {
      server.close();
      await services.userStores.close();
      await fixture.close();
    },
  };
}
