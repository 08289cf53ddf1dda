import type { BlockList } from "node:net";
import { createLoginTransactions } from "../login-transactions.js";
import { startMailDelivery } from "../mail-outbox.js";
import type { IdentityServices } from "../pool-context.js";
import { listenPlane, type PlaneListener } from "../../../transport/listen-plane.js";
import type { Logger } from "../../../transport/logger.js";
import type { NodeRequestHandler } from "../../../transport/plane-handler.js";
import type { IssuerDeps } from "./issuer-context.js";
import { createIssuerFront } from "./issuer-cors.js";
import { createIssuerHandler } from "./issuer-handler.js";
import { createRateLimiter } from "./rate-limiter.js";
import { createRecoveryComposer } from "./recovery-composer.js";

export interface IdentityListenerOptions {
  readonly services: IdentityServices;
  readonly host: string;
  readonly port: number;
  /** `{identity_url}` as clients reach it; absent means the listener's own address. */
  readonly publicUrl: string | undefined;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
  readonly isReady: () => boolean;
  readonly lockedForMigration: IssuerDeps["lockedForMigration"];
  /** Proxies whose X-Forwarded-For names the client the rate limits count. */
  readonly trustedProxies?: BlockList | undefined;
  /** How often the outbox is checked for mail to deliver. */
  readonly mailIntervalMs?: number;
  /**
   * What answers ahead of the issuer on this port (the API reference), handing every other request
   * to the issuer. Its paths must stay outside the issuer's `/{org}/{pool}/…`.
   */
  readonly front?: (issuer: NodeRequestHandler) => NodeRequestHandler;
}

export interface IdentityListener extends PlaneListener {
  /** The base of every pool's issuer. */
  readonly identityUrl: string;
}

/**
 * The identity listener: every pool's issuer under `/{org}/{pool}`, with its own per-pool CORS
 * instead of the server-wide list, and the identity mail delivery loop, which runs as long as the
 * listener does.
 */
export async function listenIdentityPlane(options: IdentityListenerOptions): Promise<IdentityListener> {
  const { services, logger } = options;
  let boundUrl = "";
  const identityUrl = () => (options.publicUrl ?? boundUrl).replace(/\/+$/, "");
  const deps: IssuerDeps = {
    services,
    transactions: createLoginTransactions(services.db, services.codes, { now: services.now }),
    limiter: createRateLimiter(services.db, { now: services.now, onSweepError: (error) => logger.warn("rate-limit sweep failed", { error }) }),
    identityUrl,
    lockedForMigration: options.lockedForMigration,
  };
  const issuer = createIssuerHandler(deps, {
    readMaxBytes: options.maxBodyBytes,
    onUnexpectedError: (error, where) => logger.error("issuer operation failed", { ...where, error }),
  });
  const issuerFront = createIssuerFront(deps, issuer.nodeHandler(), {
    trustedProxies: options.trustedProxies,
    onError: (error) => logger.error("issuer CORS check failed", { error }),
  });
  const front = options.front ? options.front(issuerFront) : issuerFront;
  const listener = await listenPlane({
    name: "identity",
    host: options.host,
    port: options.port,
    handler: front,
    corsOrigins: [],
    handlerCors: true,
    // The issuer refuses an oversized body itself, in the error shape its document gives.
    handlerLimitsBody: true,
    maxBodyBytes: options.maxBodyBytes,
    logger,
    isReady: options.isReady,
  });
  boundUrl = listener.url;
  const delivery = startMailDelivery(services.outbox, {
    intervalMs: options.mailIntervalMs ?? 1000,
    compose: createRecoveryComposer(deps),
    onError: (error) => logger.warn("identity mail delivery round failed", { error }),
  });
  return {
    url: listener.url,
    shutdownSignal: listener.shutdownSignal,
    identityUrl: identityUrl(),
    async close(graceMs) {
      await listener.close(graceMs);
      await delivery.stop();
    },
  };
}
