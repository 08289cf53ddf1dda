import type { BlockList } from "node:net";
import type { NodeHandlerFn } from "@platform/codegen/runtime/server";
import type { Logger } from "../../../log/logger.js";
import { createLoginTransactions } from "../login-transactions.js";
import { startMailDelivery } from "../mail-outbox.js";
import type { IdentityServices } from "../pool-context.js";
import type { IssuerDeps } from "./issuer-context.js";
import { createIssuerFront } from "./issuer-cors.js";
import { createIssuerHandler } from "./issuer-handler.js";
import { createRateLimiter } from "./rate-limiter.js";
import { createRecoveryComposer } from "./recovery-composer.js";

export interface IssuerPlaneOptions {
  readonly services: IdentityServices;
  /** `{identity_url}` as clients reach it; absent means the listener's own address, once it listens. */
  readonly publicUrl: string | undefined;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
  readonly lockedForMigration: IssuerDeps["lockedForMigration"];
  /** Proxies whose X-Forwarded-For names the client the rate limits count. */
  readonly trustedProxies?: BlockList | undefined;
}

/** What the identity listener serves, and the mail delivery that goes with it. */
export interface IssuerPlane {
  /** Every pool's issuer under `/{org}/{pool}`, with its own per-pool CORS instead of the server-wide list. */
  readonly handler: NodeHandlerFn;
  /** Tells the plane where its listener listens: the base of every issuer without a public URL. */
  listeningAt(url: string): void;
  /** The base of every pool's issuer. */
  identityUrl(): string;
  /** Delivers the identity mail (verification, recovery) every `intervalMs`, until stopped. */
  startMailDelivery(intervalMs?: number): { stop(): Promise<void> };
}

export function createIssuerPlane(options: IssuerPlaneOptions): IssuerPlane {
  const { services, logger } = options;
  let boundUrl = "";
  const identityUrl = () => (options.publicUrl ?? boundUrl).replace(/\/+$/, "");
  const deps: IssuerDeps = {
    services,
    transactions: createLoginTransactions(services.db, services.codes, { now: services.now }),
    limiter: createRateLimiter(services.db, {
      now: services.now,
      onSweepError: (error) => logger.warn("rate-limit sweep failed", { error }),
    }),
    identityUrl,
    lockedForMigration: options.lockedForMigration,
  };
  const issuer = createIssuerHandler(deps, {
    readMaxBytes: options.maxBodyBytes,
    onUnexpectedError: (error, where) => logger.error("issuer operation failed", { ...where, error }),
  });
  return {
    handler: createIssuerFront(deps, issuer.nodeHandler(), {
      trustedProxies: options.trustedProxies,
      onError: (error) => logger.error("issuer CORS check failed", { error }),
    }),
    listeningAt: (url) => (boundUrl = url),
    identityUrl,
    startMailDelivery: (intervalMs = 1000) =>
      startMailDelivery(services.outbox, {
        intervalMs,
        compose: createRecoveryComposer(deps),
        onError: (error) => logger.warn("identity mail delivery round failed", { error }),
      }),
  };
}
