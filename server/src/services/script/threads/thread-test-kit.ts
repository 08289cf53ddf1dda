import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  create,
  type DescMessage,
  type JsonValue,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext, type HandlerContext, type MethodImpl } from "@connectrpc/connect";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { principalKey } from "../../../auth/principal.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { createBlobUrlSigner, type BlobUrlSigner } from "../../../blob/blob-url-signer.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import type { DatabaseHandle } from "../../../db/database.js";
import type { StepStatus } from "../script-schema.js";
import { compileContract } from "../dsl/contract.js";
import { parseScript } from "../dsl/parse-script.js";
import { toolsRequired } from "../dsl/tools-required.js";
import { createScriptStore } from "../script-store.js";
import { createSecretBox, SECRET_KEY_BYTES, type SecretBox } from "../../../crypto/secret-box.js";
import { createArtifactStore, type ArtifactStore } from "./artifact-store.js";
import { threadEvent, type ThreadEventRecord } from "./thread-events.js";
import { createThreadMethods, type ThreadMethods } from "./thread-methods.js";
import { createThreadSignals, type ThreadSignals } from "./thread-signals.js";
import { createThreadStore, type NewThread, type ThreadRow, type ThreadStore } from "./thread-store.js";

/**
 * Shared by the thread method tests: a database, the methods over it with a settable clock,
 * handler contexts for an organization, and an engine stand-in that writes rows and events
 * the way the engine does (under a lease, the step row before its event, then a signal).
 */

export interface ThreadTestKit {
  readonly database: TestDatabase;
  readonly store: ThreadStore;
  readonly signals: ThreadSignals;
  readonly methods: ThreadMethods;
  /** A filesystem object store in a temporary folder, and the thread artifacts over it. */
  readonly blobs: BlobStore;
  readonly artifacts: ArtifactStore;
  /** Signs download links under `downloadBase.url`, with the clock below. */
  readonly downloadLinks: BlobUrlSigner;
  readonly downloadBase: { url: string };
  /** The secret box the methods open sealed environment values with. */
  readonly box: SecretBox;
  /** The clock the methods read; tests move it. */
  readonly clock: { ms: number };
  close(): Promise<void>;
}

export const START_MS = 1_700_000_000_000;

export async function openThreadTestKit(
  options: { allowPrivateCallbacks?: boolean; defaultTimeoutMs?: number } = {},
): Promise<ThreadTestKit> {
  const database = await openTestDatabase();
  // In-process signals on either engine: the test is one process, as the embedded server is.
  const handle: DatabaseHandle = {
    db: database.db,
    kind: "embedded",
    withMigrationLock: (work) => work(),
    applyMigrations: async () => {},
    listen: async () => async () => {},
    close: async () => {},
  };
  const signals = await createThreadSignals(handle);
  const store = createThreadStore(database.db);
  const clock = { ms: START_MS };
  const blobRoot = await mkdtemp(join(tmpdir(), "thread-blobs-"));
  const blobs = createFilesystemBlobStore(blobRoot);
  const artifacts = createArtifactStore(database.db, blobs);
  const downloadBase = { url: "http://downloads.test" };
  const downloadLinks = createBlobUrlSigner({
    signingKey: new Uint8Array(randomBytes(32)),
    baseUrl: () => downloadBase.url,
    now: () => clock.ms,
  });
  const box = createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
  const methods = createThreadMethods({
    db: database.db,
    store,
    signals,
    artifacts,
    downloadLinks,
    box,
    now: () => clock.ms,
    watchPollMs: 50,
    ...options,
  });
  return {
    database,
    store,
    signals,
    methods,
    blobs,
    artifacts,
    downloadLinks,
    downloadBase,
    box,
    clock,
    async close() {
      await signals.close();
      await database.close();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}

/** A handler context as the auth interceptor leaves it, for `orgId`; `signal` stands for the client. */
export function contextFor(orgId: string, signal?: AbortSignal): HandlerContext {
  const contextValues = createContextValues();
  contextValues.set(principalKey, {
    orgId,
    orgName: `name-of-${orgId.slice(0, 8)}`,
    keyId: "key",
    roles: new Set(["admin"]),
  });
  return createHandlerContext({
    service: ScriptService,
    method: ScriptService.method.getThread,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/",
    contextValues,
    ...(signal ? { requestSignal: signal } : {}),
  });
}

/**
 * Calls a unary method the way the router does: the request built as a full message, the answer
 * read back as one (so fields the handler left out get their defaults, as on the wire).
 */
export async function call<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: MethodImpl<DescMethodUnary<I, O>>,
  init: MessageInitShape<I>,
  context: HandlerContext,
): Promise<MessageShape<O>> {
  return create(method.output, await handler(create(method.input, init), context));
}

/** Calls a server-streaming method the way the router does, each message read back whole. */
export async function* stream<I extends DescMessage, O extends DescMessage>(
  method: DescMethodServerStreaming<I, O>,
  handler: MethodImpl<DescMethodServerStreaming<I, O>>,
  init: MessageInitShape<I>,
  context: HandlerContext,
): AsyncGenerator<MessageShape<O>> {
  for await (const message of handler(create(method.input, init), context)) yield create(method.output, message);
}

/** Every message of a server stream. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const messages: T[] = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

/** Publishes `source` as script `name` in `orgId`, as CreateScript does. */
export async function publishScript(
  database: TestDatabase,
  orgId: string,
  name: string,
  source: string,
): Promise<void> {
  const document = parseScript(source);
  await createScriptStore(database.db).publish(orgId, {
    name,
    source,
    sourceSha256: createHash("sha256").update(source).digest("hex"),
    description: document.description,
    contract: compileContract(document).toProto(),
    toolsRequired: toolsRequired(document),
  });
}

/**
 * A new organization with `source` published as a script, and a pending thread of it inserted as
 * CreateThread leaves one: what the engine's tests hand a worker to claim.
 */
export async function insertScriptThread(
  database: TestDatabase,
  store: ThreadStore,
  source: string,
  input: Record<string, unknown> = {},
): Promise<ThreadRow> {
  const orgId = await database.createOrganization();
  const name = `s-${randomBytes(4).toString("hex")}`;
  await publishScript(database, orgId, name, source);
  return store.insert({
    orgId,
    scriptName: name,
    scriptVersion: 1,
    input,
    env: {},
    metadata: {},
    totalSteps: parseScript(source).steps.length,
  });
}

/** Inserts a thread row directly (what CreateThread leaves), with `patch` over the defaults. */
export async function insertThread(
  kit: ThreadTestKit,
  orgId: string,
  patch: Partial<NewThread> = {},
): Promise<ThreadRow> {
  return kit.store.insert({
    orgId,
    scriptName: "demo",
    scriptVersion: 1,
    input: {},
    env: {},
    metadata: {},
    totalSteps: 2,
    createdAt: kit.clock.ms,
    ...patch,
  });
}

const OWNER = "test-worker";

/** Writes a thread's progress the way the engine does. */
export class EngineDouble {
  constructor(
    private readonly kit: ThreadTestKit,
    readonly thread: ThreadRow,
  ) {}

  /** Claims the thread (a lease, RUNNING) and writes `started`. */
  async start(): Promise<void> {
    await this.claim();
    await this.emit(threadEvent.started(this.thread.scriptName, this.thread.totalSteps));
  }

  /** Claims the thread without an event, as a resumed run does. */
  async claim(): Promise<void> {
    const current = await this.kit.store.get(this.thread.orgId, this.thread.id);
    await this.kit.store.updateIfStatus(this.thread.orgId, this.thread.id, ["pending", "paused", "running"], {
      status: "running",
      leaseOwner: OWNER,
      leaseExpiresAt: this.kit.clock.ms + 3_600_000,
      startedAt: current?.startedAt || this.kit.clock.ms,
    });
  }

  async stepStarted(
    path: string,
    step: { name: string; primitive?: string; tool?: string; input?: unknown },
  ): Promise<void> {
    const parentPath = path.split(".").slice(0, -2).join(".");
    await this.save(path, {
      name: step.name,
      primitive: step.primitive ?? "execute",
      tool: step.tool ?? "",
      parentPath,
      status: "running",
      input: step.input ?? null,
      startedAt: this.kit.clock.ms,
    });
    await this.kit.store.update(this.thread.id, OWNER, { currentStepPath: path, currentStepName: step.name });
    await this.emit(
      threadEvent.stepStarted({
        stepPath: path,
        name: step.name,
        primitive: step.primitive ?? "execute",
        tool: step.tool ?? "",
      }),
    );
  }

  async stepCompleted(path: string, output: unknown): Promise<void> {
    const row = await this.kit.store.step(this.thread.orgId, this.thread.id, path);
    await this.save(path, { status: "completed", output, finishedAt: this.kit.clock.ms });
    await this.emit(
      threadEvent.stepCompleted({ stepPath: path, name: row?.name ?? "" }, this.kit.clock.ms - (row?.startedAt ?? 0)),
    );
  }

  async stepFailed(path: string, error: string): Promise<void> {
    const row = await this.kit.store.step(this.thread.orgId, this.thread.id, path);
    await this.save(path, { status: "failed", error, finishedAt: this.kit.clock.ms });
    await this.emit(threadEvent.stepFailed({ stepPath: path, name: row?.name ?? "" }, error));
  }

  async decision(path: string, chosenBranch: string): Promise<void> {
    await this.emit(
      threadEvent.decision(path, { strategy: "rule", chosenBranch, reasoning: `matched ${chosenBranch}` }),
    );
  }

  async yielded(path: string, value: unknown): Promise<void> {
    const sequence = await this.kit.store.nextYieldSequence(this.thread.orgId, this.thread.id);
    await this.emit(
      threadEvent.yielded({ stepPath: path, name: `yield ${path}` }, value as JsonValue, sequence, this.kit.clock.ms),
    );
  }

  async pause(path: string): Promise<void> {
    await this.save(path, { status: "paused" });
    await this.kit.store.release(this.thread.id, OWNER, { status: "paused" });
  }

  /** `warnings` stands for the output's mismatches with `outputs`, which the worker records. */
  async complete(output: unknown, stepsExecuted = 0, warnings: string[] = []): Promise<void> {
    await this.kit.store.release(this.thread.id, OWNER, {
      status: "completed",
      output,
      warnings,
      finishedAt: this.kit.clock.ms,
    });
    await this.emit(threadEvent.completed(this.kit.clock.ms - this.thread.createdAt, stepsExecuted));
  }

  async fail(error: string, failedStepPath = ""): Promise<void> {
    await this.kit.store.release(this.thread.id, OWNER, {
      status: "failed",
      error,
      failedStepPath,
      finishedAt: this.kit.clock.ms,
    });
    await this.emit(threadEvent.failed(error, { stepPath: failedStepPath, name: "" }));
  }

  async emit(event: ThreadEventRecord): Promise<void> {
    await this.kit.store.appendEvent(this.thread.orgId, this.thread.id, event);
    await this.kit.signals.eventsWritten(this.thread.id);
  }

  /** Writes the step row alone (the engine writes it before the step's event). */
  async save(path: string, patch: { status: StepStatus } & Record<string, unknown>): Promise<void> {
    const current = await this.kit.store.step(this.thread.orgId, this.thread.id, path);
    const saved = await this.kit.store.saveStep(
      {
        threadId: this.thread.id,
        stepPath: path,
        orgId: this.thread.orgId,
        stepId: current?.stepId ?? `step_${path.replaceAll(".", "_")}`,
        name: current?.name ?? "",
        primitive: current?.primitive ?? "execute",
        tool: current?.tool ?? "",
        parentPath: current?.parentPath ?? "",
        input: current?.input ?? null,
        output: current?.output ?? null,
        startedAt: current?.startedAt ?? 0,
        ...patch,
      },
      OWNER,
    );
    if (!saved) throw new Error(`the test engine lost the lease of ${this.thread.id}`);
  }
}
