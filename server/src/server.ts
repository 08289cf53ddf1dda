import { setMaxListeners } from "node:events";
import { createDataPlatform, type DataPlatform } from "./data-platform.js";
import { EmbedderRegistry } from "./embeddings/embedder-registry.js";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { IdentityAdminRoutes } from "../../gen/openapi/identity-admin/routes.js";
import { IdentityIssuerRoutes } from "../../gen/openapi/identity-issuer/routes.js";
import { registerSecretService } from "../../gen/platform/compute/v1/secret_service_server.js";
import { registerActionsService } from "../../gen/platform/data/actions/v1/actions_service_server.js";
import { registerIngestService } from "../../gen/platform/data/ingest/v1/ingest_service_server.js";
import { registerPipelineService } from "../../gen/platform/data/pipeline/v1/pipeline_service_server.js";
import { registerSourceService } from "../../gen/platform/data/source/v1/source_service_server.js";
import { registerVectorService } from "../../gen/platform/data/vector/v1/vector_service_server.js";
import { registerVectorDataService } from "../../gen/platform/data/vector/v1/vector_data_service_server.js";
import { registerIamService } from "../../gen/platform/iam/v1/iam_service_server.js";
import { registerScriptService } from "../../gen/platform/script/v1/script_service_server.js";
import { createAuthInterceptor } from "./auth/auth-interceptor.js";
import { createCredentialCache } from "./auth/credential-cache.js";
import { followCredentialChanges } from "./auth/credential-changes.js";
import { ensureOperator } from "./auth/operator.js";
import { startAbandonedWriteSweeper } from "./blob/abandoned-write-sweeper.js";
import { createBlobDownloadHandler } from "./blob/blob-download-handler.js";
import { createBlobUrlSigner, DOWNLOAD_LINK_KEY_PURPOSE } from "./blob/blob-url-signer.js";
import { createBlobStore } from "./blob/create-blob-store.js";
import { createHealthState } from "./grpc/health-service.js";
import { registerGrpcProtocolServices } from "./grpc/grpc-protocol-services.js";
import type { ServerConfig } from "./config.js";
import { openDatabase } from "./db/database.js";
import { migrateDatabase } from "./db/migrate.js";
import { createListenerReferences, loadReferenceSources } from "./docs/listener-references.js";
import { servedRoutesOfBindings } from "./docs/served-routes.js";
import { createIamService } from "./services/iam/iam-handlers.js";
import { createIdentityAdminPlane } from "./services/identity/admin/identity-admin-plane.js";
import { createIssuerPlane, type IssuerPlane } from "./services/identity/issuer/issuer-plane.js";
import { createIdentityServices } from "./services/identity/pool-context.js";
import { createPoolStore } from "./services/identity/pool-store.js";
import { createSmtpMailSender, type MailSender } from "./services/identity/smtp-mail-sender.js";
import {
  MIGRATION_RETRY_AFTER_SECONDS,
  poolLockedForMigration,
} from "./services/identity/user-store-migration/migration-lock.js";
import {
  startMigrationWorker,
  type MigrationWorker,
} from "./services/identity/user-store-migration/migration-worker.js";
import type { UserStoreDirectory } from "./services/identity/user-store-directory.js";
import { createCallbackDeliverer, type CallbackDeliverer } from "./services/script/callbacks/callback-deliverer.js";
import { createCallbackPoster } from "./services/script/callbacks/callback-poster.js";
import { createCallbackSigningKeys } from "./services/script/callbacks/callback-signing-keys.js";
import { createThreadWorker, type ThreadWorker } from "./services/script/engine/thread-worker.js";
import { createRegistryPlane } from "./services/registry/registry-plane.js";
import { createGitPlane } from "./services/git/git-plane.js";
import { startGitSshGateway } from "./services/git/git-ssh-gateway.js";
import { prepareGitLauncher } from "./services/git/launcher/launch-git.js";
import { createCheckLogSignals } from "./services/git/collab/checks/check-log-signals.js";
import type { GitSshListener } from "./services/git/ssh/git-ssh-server.js";
import { createRegistryTokens, REGISTRY_TOKEN_KEY_PURPOSE } from "./services/registry/access/registry-token.js";
import type { PollLoop } from "./background/poll-loop.js";
import { startGarbageCollector } from "./services/registry/content/garbage-collector.js";
import { createRepositoryCache, followRepositoryChanges } from "./services/registry/content/repository-cache.js";
import { createScanWorker, type ScanWorker } from "./services/registry/scan/scan-worker.js";
import { sealPlaintextEnvValues } from "./services/script/env-sealing.js";
import { createScriptService } from "./services/script/script-handlers.js";
import { createScriptStore } from "./services/script/script-store.js";
import { createArtifactStore } from "./services/script/threads/artifact-store.js";
import { createThreadMethods } from "./services/script/threads/thread-methods.js";
import { createThreadSignals, type ThreadSignals } from "./services/script/threads/thread-signals.js";
import { createThreadStore } from "./services/script/threads/thread-store.js";
import { loadTemplateCatalog } from "./services/script/templates/template-catalog.js";
import { createTemplateMethods } from "./services/script/templates/template-handlers.js";
import { createCelWorkerPool } from "./services/script/tools/cel-worker-pool.js";
import { createNativeToolSource } from "./services/script/tools/native-tools.js";
import { createToolRegistry } from "./services/script/tools/tool-registry.js";
import { createGuardedDispatcher } from "./net/private-network.js";
import { createPageTokenSigner, PAGE_TOKEN_KEY_PURPOSE } from "./pagination/page-token-signer.js";
import { createSecretBox } from "./crypto/secret-box.js";
import { loadSecretKey } from "./crypto/secret-key.js";
import { createSecretService } from "./services/secrets/secret-handlers.js";
import { listenPlane, type PlaneListener } from "./transport/listen-plane.js";
import { createObjectStorage } from "./services/storage/object-storage.js";
import { createS3Credentials, type S3Credential } from "./services/storage/s3/s3-credentials.js";
import { createS3Handler } from "./services/storage/s3/s3-handler.js";
import type { Logger } from "./log/logger.js";
import { loadActionDefinitions, SHIPPED_ACTIONS_DIR } from "./services/actions/action-catalog-loader.js";

/** A started server: where each plane listens, and how to stop it. */
export interface RunningServer {
  /** Base URL of each plane that is served (planes not built yet are absent). */
  readonly urls: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** What `<dataDir>/server.json` says while a server runs, so admin commands can reach it. */
export interface ServerRecord {
  readonly pid: number;
  readonly api: string;
}

/** Largest object an ingest job reads whole to extract its text. */
const MAX_INGESTED_OBJECT_BYTES = 64 * 1024 * 1024;

export const serverRecordFile = (dataDir: string) => join(dataDir, "server.json");

/**
 * Starts every plane that is built: opens and migrates the database, makes sure the operator
 * credential exists, registers the services through their generated glue and listens.
 */
export async function startServer(config: ServerConfig, logger: Logger): Promise<RunningServer> {
  const startedAt = Date.now();
  const version = await serverVersion();
  // The listeners' API references are made from these: read while the database opens.
  const referenceSources = loadReferenceSources();
  referenceSources.catch(() => undefined); // awaited below; a failure before then must not go unhandled
  const database = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const listeners: PlaneListener[] = [];
  const shutdown = new AbortController();
  // Every call in progress holds one abort listener on it (its context's link, removed when the
  // call ends): many at once is the normal load, not a leak, and must not print Node's
  // MaxListeners warning.
  setMaxListeners(0, shutdown.signal);
  // json.transform's worker threads: one pool per server, started on demand, ended at close.
  const celWorkers = createCelWorkerPool();
  let worker: ThreadWorker | undefined;
  let registryScans: ScanWorker | undefined;
  let startRegistryGc: (() => PollLoop) | undefined;
  let startBlobSweeper: (() => PollLoop) | undefined;
  let deliverer: CallbackDeliverer | undefined;
  let issuer: IssuerPlane | undefined;
  let signals: ThreadSignals | undefined;
  let userStores: UserStoreDirectory | undefined;
  let userStoreMigrations: MigrationWorker | undefined;
  /** Stop each cache following its changes on the database. */
  const stopFollowingChanges: (() => Promise<void>)[] = [];
  let dataPlatform: DataPlatform | undefined;
  let gitSsh: { listener: GitSshListener; fingerprint: string } | undefined;
  let closeCheckSignals: (() => Promise<void>) | undefined;
  /** Each listener's name in the ready line, in the order of `listeners`. */
  const listenerNames: string[] = [];
  /** The api listener's own URL, known once it listens: the base of download links without --public-api-url. */
  let apiUrl = "";
  /** `{identity_url}`: --public-identity-url, or the identity listener's own URL once it listens. */
  let identityUrl = config.publicIdentityUrl ?? "";
  const mailSender: MailSender | undefined = config.mail ? createSmtpMailSender(config.mail) : undefined;
  let ready = false;
  /** What grpc.health.v1.Health answers: SERVING while `ready`, NOT_SERVING from the start of close(). */
  const health = createHealthState();
  try {
    logger.info("database opened", { kind: database.kind });
    await migrateDatabase(database, (line) => logger.info(line));
    const { db } = database;
    await ensureOperator(db, config.dataDir);
    const secretKey = await loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir });
    const box = createSecretBox(secretKey);
    const sealedEnvValues = await sealPlaintextEnvValues(db, box);
    if (sealedEnvValues > 0) logger.info("environment values sealed", { count: sealedEnvValues });
    // Every process on one database must share the store, as they share the secret key that
    // signs its download links.
    const blobs = createBlobStore(config.blob);
    const downloadLinks = createBlobUrlSigner({
      signingKey: box.deriveKey(DOWNLOAD_LINK_KEY_PURPOSE),
      baseUrl: () => config.publicApiUrl ?? apiUrl,
    });
    const artifacts = createArtifactStore(db, blobs);
    registryScans = createScanWorker({ db, blobs, logger, ...config.registryScan });
    startBlobSweeper = () =>
      startAbandonedWriteSweeper(blobs, (error) => logger.error("sweeping abandoned blob writes failed", { error }));
    startRegistryGc = () =>
      startGarbageCollector({
        db,
        blobs,
        ...config.registryGc,
        onError: (error) => logger.error("registry garbage collection failed", { error }),
      });
    const pageTokens = createPageTokenSigner(box.deriveKey(PAGE_TOKEN_KEY_PURPOSE));

    // Verified API keys, dropped on every process when one is revoked, rotated or its grants change.
    const credentials = createCredentialCache();
    stopFollowingChanges.push(await followCredentialChanges(database, credentials));
    // The auth interceptor reads the access rules of every service registered on the plane.
    const api = createServiceRouter({
      interceptors: [
        pageTokens.interceptor,
        createAuthInterceptor({ db, bindings: () => api.bindings, credentials, box }),
      ],
      readMaxBytes: config.maxBodyBytes,
      shutdownSignal: shutdown.signal,
      onUnexpectedError: (error, where) => logger.error("call failed", { ...where, error }),
    });
    // One registry of embedders for the script tools now, and for search and ingestion when they are served.
    const embedders = new EmbedderRegistry({
      config: config.embeddings,
      allowPrivateNetwork: config.allowPrivateNetwork,
    });
    const tools = createToolRegistry([
      createNativeToolSource({
        llm: config.llm,
        celWorkers,
        allowPrivateNetwork: config.allowPrivateNetwork,
        embedders,
      }),
    ]);
    const templateCatalog = await loadTemplateCatalog();
    const templates = createTemplateMethods(templateCatalog);
    signals = await createThreadSignals(database);
    const threadStore = createThreadStore(db);
    worker = createThreadWorker({
      box,
      store: threadStore,
      scripts: createScriptStore(db),
      signals,
      tools,
      artifacts,
      leaseMs: config.threadLeaseMs,
      concurrency: config.threadConcurrency,
      limits: config.threadLimits,
      log: (msg, fields) => logger.warn(msg, fields),
    });
    const threads = createThreadMethods({
      db,
      store: threadStore,
      signals,
      artifacts,
      downloadLinks,
      box,
      allowPrivateCallbacks: config.allowPrivateNetwork,
    });
    const callbackKeys = createCallbackSigningKeys({ db, box });
    deliverer = createCallbackDeliverer({
      db,
      signals,
      keys: callbackKeys,
      post: createCallbackPoster(createGuardedDispatcher({ allowPrivateNetwork: config.allowPrivateNetwork })),
      log: (msg, fields) => logger.warn(msg, fields),
    });
    const scriptService = createScriptService({ db, box, version, startedAt, tools, templates, threads, callbackKeys });
    registerScriptService(api, scriptService);
    registerSecretService(api, createSecretService({ db, box }));
    registerIamService(api, createIamService({ db, box }));
    // Last: reflection and health answer for every service registered above.
    registerGrpcProtocolServices(api, health);

    // The data listener: the data platform's services, with the same credentials and tenancy as the
    // api listener (the key's organization scopes every bucket).
    const data = createServiceRouter({
      interceptors: [pageTokens.interceptor, createAuthInterceptor({ db, bindings: () => data.bindings, credentials })],
      readMaxBytes: config.maxBodyBytes,
      shutdownSignal: shutdown.signal,
      onUnexpectedError: (error, where) => logger.error("call failed", { ...where, error }),
    });
    // Buckets and objects: served to S3 clients on their own listener (below), read by the data services.
    const storage = createObjectStorage({
      db,
      blobs,
      onListenerError: (error) => logger.error("storage listener failed", { error }),
    });
    dataPlatform = createDataPlatform({
      db,
      box,
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      allowPrivateNetwork: config.allowPrivateNetwork,
      oauthProviders: config.oauthProviders,
      embedders,
      storage: storage.directory,
      scripts: scriptService,
      leaseMs: config.threadLeaseMs,
      maxObjectBytes: MAX_INGESTED_OBJECT_BYTES,
      actions: await loadActionDefinitions(config.actionsDir ?? SHIPPED_ACTIONS_DIR, templateCatalog),
      llmConfigured: config.llm !== undefined,
      actionRunRetentionMs: config.actionRunRetentionMs,
      actionConcurrency: config.actionConcurrency,
      actionOrgConcurrency: config.actionOrgConcurrency,
      log: (level, message, fields) => logger[level](message, fields),
    });
    registerPipelineService(data, dataPlatform.pipelines);
    registerSourceService(data, dataPlatform.sources);
    registerIngestService(data, dataPlatform.ingest);
    registerVectorService(data, dataPlatform.vector);
    registerVectorDataService(data, dataPlatform.vectorData);
    registerActionsService(data, { ...dataPlatform.actionRuns, ...dataPlatform.actionQueue });
    registerGrpcProtocolServices(data, health);

    // The plane aborts the router's shutdown signal when it closes, so streams end cleanly.
    const common = {
      host: config.host,
      corsOrigins: config.corsOrigins,
      maxBodyBytes: config.maxBodyBytes,
      logger,
      isReady: () => ready,
      shutdownController: shutdown,
    };
    const identity = createIdentityServices(db, box, { logger, sender: mailSender });
    userStores = identity.userStores;
    // Any process may take a pool's user-store migration over: the job is leased, like a thread.
    userStoreMigrations = await startMigrationWorker({
      db,
      directory: userStores,
      logger,
      listen: (channel, handler) => database.listen(channel, handler),
    });
    const identityAdmin = createIdentityAdminPlane(
      {
        services: identity,
        pools: createPoolStore(db),
        identityUrl: () => identityUrl || `http://${config.host}:${config.ports.identity}`,
      },
      { logger, readMaxBytes: config.maxBodyBytes, pageTokens, credentials },
    );
    // Each listener documents what it routes: assembled once, here, from the contract documents.
    const references = await createListenerReferences(await referenceSources, {
      apiRoutes: { rpc: servedRoutesOfBindings(api.bindings), identityAdmin: IdentityAdminRoutes },
      dataRoutes: servedRoutesOfBindings(data.bindings),
      issuerRoutes: IdentityIssuerRoutes,
      publicApiUrl: config.publicApiUrl,
      publicIdentityUrl: config.publicIdentityUrl,
    });
    // The API reference (/openapi.json, /docs) and signed downloads need no credential: both are
    // served before the RPC router and its auth. The identity admin plane (/v1/identity) answers
    // its own routes and hands every other request on.
    const handler = references.api(
      createBlobDownloadHandler({
        store: blobs,
        signer: downloadLinks,
        next: identityAdmin.nodeHandler(api.nodeHandler()),
        onError: (error) => logger.error("download failed", { error }),
      }),
    );
    listeners.push(await listenPlane({ ...common, name: "api", port: config.ports.api, handler }));
    listenerNames.push("api");
    apiUrl = listeners[0]!.url;
    listeners.push(
      await listenPlane({
        ...common,
        name: "data",
        port: config.ports.data,
        handler: references.data(data.nodeHandler()),
      }),
    );
    listenerNames.push("data");
    // Every pool's issuer, on a listener of its own that applies each pool's CORS itself.
    issuer = createIssuerPlane({
      services: identity,
      publicUrl: config.publicIdentityUrl,
      maxBodyBytes: config.maxBodyBytes,
      logger,
      lockedForMigration: (record) =>
        poolLockedForMigration(record) ? { retryAfterSeconds: MIGRATION_RETRY_AFTER_SECONDS } : undefined,
      trustedProxies: config.trustedProxies,
    });
    const identityListener = await listenPlane({
      name: "identity",
      host: config.host,
      port: config.ports.identity,
      handler: references.identity(issuer.handler),
      corsOrigins: [],
      handlerCors: true,
      // The issuer refuses an oversized body itself, in the error shape its document gives.
      handlerLimitsBody: true,
      maxBodyBytes: config.maxBodyBytes,
      logger,
      isReady: () => ready,
    });
    listeners.push(identityListener);
    listenerNames.push("identity");
    issuer.listeningAt(identityListener.url);
    identityUrl = issuer.identityUrl();

    // Buckets and objects, served to S3 clients on a listener of their own. Its credential cache
    // follows the same change notices as the bearer path, so a revoked key stops working here too.
    const s3Credentials = createCredentialCache<S3Credential>();
    stopFollowingChanges.push(await followCredentialChanges(database, s3Credentials));
    const s3Handler = createS3Handler({
      directory: storage.directory,
      uploads: storage.uploads,
      credentials: createS3Credentials({ db, box, cache: s3Credentials }),
      logger,
    });
    listeners.push(
      await listenPlane({
        name: "s3",
        host: config.host,
        port: config.ports.s3,
        handler: s3Handler,
        corsOrigins: config.corsOrigins,
        // Objects are far larger than RPC bodies: the S3 handler bounds them itself (5 GiB a PUT).
        handlerLimitsBody: true,
        maxBodyBytes: config.maxBodyBytes,
        logger,
        isReady: () => ready,
      }),
    );
    listenerNames.push("s3");

    // The container registry: the OCI distribution protocol, its token endpoint and control plane.
    const repositories = createRepositoryCache();
    stopFollowingChanges.push(await followRepositoryChanges(database, repositories));
    listeners.push(
      await listenPlane({
        name: "registry",
        host: config.host,
        port: config.ports.registry,
        handler: createRegistryPlane({
          db,
          blobs,
          credentials,
          box,
          tokens: createRegistryTokens(box.deriveKey(REGISTRY_TOKEN_KEY_PURPOSE)),
          repositories,
          logger,
          readMaxBytes: config.maxBodyBytes,
        }),
        corsOrigins: config.corsOrigins,
        // Layers are far larger than RPC bodies, and stream to object storage as they arrive.
        handlerLimitsBody: true,
        maxBodyBytes: config.maxBodyBytes,
        logger,
        isReady: () => ready,
      }),
    );
    listenerNames.push("registry");

    // The git gateway: the smart HTTP wire and its REST control plane, with the api listener's credentials.
    // Its git processes start from a small helper process, running before the first request.
    prepareGitLauncher();
    const checkSignals = await createCheckLogSignals(database);
    closeCheckSignals = () => checkSignals.close();
    listeners.push(
      await listenPlane({
        name: "git",
        host: config.host,
        port: config.ports.git,
        handler: createGitPlane({ db, credentials, box, dataDir: config.dataDir, logger, blobs, checkSignals }),
        corsOrigins: config.corsOrigins,
        // Packs stream straight to git, whatever their size.
        handlerLimitsBody: true,
        maxBodyBytes: config.maxBodyBytes,
        logger,
        isReady: () => ready,
      }),
    );
    listenerNames.push("git");

    // The git wire over SSH, with the keys users upload on the git control plane.
    gitSsh = await startGitSshGateway({
      db,
      credentials,
      box,
      host: config.host,
      port: config.ports.gitSsh,
      dataDir: config.dataDir,
      logger,
    });
  } catch (error) {
    await gitSsh?.listener.close();
    await Promise.all(listeners.map((l) => l.close(0)));
    await closeCheckSignals?.();
    await dataPlatform?.stop();
    await userStoreMigrations?.stop();
    await userStores?.close();
    await celWorkers.close();
    await signals?.close();
    for (const stop of stopFollowingChanges) await stop();
    mailSender?.close();
    await database.close();
    throw error;
  }
  worker?.start();
  registryScans?.start();
  const registryGc = startRegistryGc?.();
  const blobSweeper = startBlobSweeper?.();
  deliverer?.start();
  dataPlatform?.start();
  const mailDelivery = issuer?.startMailDelivery();

  const urls: Record<string, string> = Object.fromEntries(listeners.map((l, i) => [listenerNames[i]!, l.url]));
  if (gitSsh) {
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    urls.gitSsh = `ssh://git@${host}:${gitSsh.listener.port}`;
    // What users compare with the fingerprint their ssh client shows on first connection.
    urls.gitSshHostKey = gitSsh.fingerprint;
  }
  const record: ServerRecord = { pid: process.pid, api: urls.api! };
  await writeFile(serverRecordFile(config.dataDir), JSON.stringify(record) + "\n", { mode: 0o600 });
  ready = true;
  health.setServing(true);
  return {
    urls,
    async close() {
      ready = false;
      health.setServing(false);
      // One turn of the event loop, so that health watchers are sent NOT_SERVING before the
      // listener's shutdown signal ends their streams: their answer is written in microtasks, and
      // without this turn the abort wins (the shutdown test sees only SERVING).
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([gitSsh?.listener.close(), ...listeners.map((l) => l.close(config.shutdownGraceMs))]);
      // Running threads give their leases back, so the next start (or another server) resumes them at once.
      await worker?.stop();
      await registryScans?.stop();
      await registryGc?.stop();
      await blobSweeper?.stop();
      await dataPlatform?.stop();
      await userStoreMigrations?.stop();
      await userStores?.close();
      await celWorkers.close();
      await deliverer?.stop();
      await mailDelivery?.stop();
      await signals?.close();
      await closeCheckSignals?.();
      for (const stop of stopFollowingChanges) await stop();
      mailSender?.close();
      await rm(serverRecordFile(config.dataDir), { force: true });
      await database.close();
    },
  };
}

async function serverVersion(): Promise<string> {
  const path = new URL("../package.json", import.meta.url);
  return (JSON.parse(await readFile(path, "utf8")) as { version: string }).version;
}
