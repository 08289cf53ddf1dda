import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import {
  ActionRunManifestSchema,
  ActionRunStatus,
  type ActionRunManifest,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import { ActionsService } from "../../../../gen/platform/data/actions/v1/actions_service_pb.js";
import { principalKey } from "../../auth/principal.js";
import type { ActionDefinition } from "./action-definition.js";
import type { ActionDispatch, ActionRequest, ActionRunner, PreparedAction } from "./action-runner.js";
import { manifestKey } from "./run-keys.js";
import type { QueueCatalog, QueueManifests, QueueThreads, ThreadYield } from "./queue-ports.js";

/**
 * Shared by the queue's tests: a runner double that records what it is asked and runs until told,
 * and in-memory manifests, threads and catalog behind the queue's ports.
 */

export const slowAction: ActionDefinition = {
  id: "slow_echo",
  template: "action_slow_echo",
  name: "Slow echo",
  description: "Echoes its params after a while.",
  icon: "clock",
  visibility: "primary",
  invoke: "async",
  pillars: ["objects"],
  shapes: ["objectSingle"],
  acceptedContentTypes: [],
  acceptedExtensions: [],
  requires: [],
  bind: {},
  output: { kind: "JSON", route: "inline" },
};

export const catalog: QueueCatalog = { get: (id) => (id === slowAction.id ? slowAction : undefined) };

export function contextOf(orgId: string, signal?: AbortSignal): HandlerContext {
  return createHandlerContext({
    service: ActionsService,
    method: ActionsService.method.enqueueAction,
    protocolName: "in-process",
    requestMethod: "POST",
    url: "in-process://test",
    ...(signal ? { requestSignal: signal } : {}),
    contextValues: createContextValues().set(principalKey, {
      orgId,
      orgName: "test",
      keyId: "test",
      roles: new Set(["owner"]),
    }),
  });
}

/** Manifests in memory, written by the runner double as the real runner writes them. */
export class MemoryManifests implements QueueManifests {
  readonly objects = new Map<string, ActionRunManifest>();
  private path = (orgId: string, bucket: string, key: string) => `${orgId}/${bucket}/${key}`;

  write(dispatch: ActionDispatch, fields: Omit<MessageInitShape<typeof ActionRunManifestSchema>, "$typeName">): void {
    this.objects.set(
      this.path(dispatch.orgId, dispatch.bucket, manifestKey(dispatch.reverseTs, dispatch.runId)),
      create(ActionRunManifestSchema, {
        runId: dispatch.runId,
        actionId: dispatch.actionId,
        bucket: dispatch.bucket,
        reverseTs: dispatch.reverseTs,
        ...fields,
      }),
    );
  }

  async read(orgId: string, bucket: string, reverseTs: string, runId: string) {
    return this.objects.get(this.path(orgId, bucket, manifestKey(reverseTs, runId)));
  }

  async find(orgId: string, bucket: string, runId: string) {
    const start = this.path(orgId, bucket, "");
    for (const [path, manifest] of this.objects)
      if (path.startsWith(start) && path.endsWith(`_${runId}/manifest.json`)) return manifest;
    return undefined;
  }
}

/** Threads in memory: yields appended by tests, ended by tests. */
export class MemoryThreads implements QueueThreads {
  private readonly threads = new Map<string, { values: ThreadYield[]; ended: boolean; wake: Set<() => void> }>();

  private of(threadId: string) {
    let thread = this.threads.get(threadId);
    if (!thread) this.threads.set(threadId, (thread = { values: [], ended: false, wake: new Set() }));
    return thread;
  }

  yieldValue(threadId: string, value: ThreadYield["value"]): void {
    const thread = this.of(threadId);
    thread.values.push({ stepPath: String(thread.values.length), stepName: "tick", value });
    for (const wake of thread.wake) wake();
  }

  end(threadId: string): void {
    const thread = this.of(threadId);
    thread.ended = true;
    for (const wake of thread.wake) wake();
  }

  async *yields(_orgId: string, threadId: string, signal: AbortSignal) {
    const thread = this.of(threadId);
    let next = 0;
    while (!signal.aborted) {
      while (next < thread.values.length) yield thread.values[next++]!;
      if (thread.ended) return;
      await new Promise<void>((resolve) => {
        thread.wake.add(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}

/** Run ids in creation order, as the runner's UUIDv7 ids are. */
let runCount = 0;
const sortableRunId = () =>
  `${Date.now()
    .toString(16)
    .padStart(12, "0")
    .replace(/^(.{8})(.{4})$/, "$1-$2")}-7000-8000-${String(++runCount).padStart(12, "0")}`;

const event = (init: MessageInitShape<typeof ActionEventSchema>["event"]) => create(ActionEventSchema, { event: init });

/** A latch a test opens to let a run go on. */
export class Gate {
  private open = false;
  private readonly waiting = new Set<() => void>();
  release(): void {
    this.open = true;
    for (const resolve of this.waiting) resolve();
  }
  wait(signal?: AbortSignal): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.add(resolve);
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}

/**
 * The runner double: prepare checks the selection and params like the real one in miniature;
 * execute writes a RUNNING manifest, creates (or resumes) a thread, yields `started`, waits for its
 * gate, then completes with the params echoed, writing the terminal manifest.
 */
export class RunnerDouble implements ActionRunner {
  readonly executed: { runId: string; threadId: string | undefined }[] = [];
  readonly failed: { runId: string; error: string }[] = [];
  readonly gates = new Map<string, Gate>();
  readonly aborted: string[] = [];
  /** Run ids whose execute throws before starting (a dispatch-time error). */
  readonly throwing = new Set<string>();
  executing = 0;
  maxExecuting = 0;
  throwOnAbort = false;
  private threadCount = 0;

  constructor(
    readonly manifests: MemoryManifests,
    /** Where the double's threads yield, as the script service's threads would. */
    readonly threads?: MemoryThreads,
  ) {}

  gate(runId: string): Gate {
    let gate = this.gates.get(runId);
    if (!gate) this.gates.set(runId, (gate = new Gate()));
    return gate;
  }

  async prepare(orgId: string, request: ActionRequest): Promise<PreparedAction> {
    const action = catalog.get(request.actionId);
    if (!action) throw new ConnectError(`action_id: no action ${request.actionId}`, Code.NotFound);
    const shape = request.selection?.shape;
    if (shape?.case !== "objectSingle")
      throw new ConnectError("selection: object_single is required", Code.InvalidArgument);
    if (shape.value.key.startsWith("missing"))
      throw new ConnectError(`object ${shape.value.key} not found`, Code.NotFound);
    if (request.params?.bad !== undefined) throw new ConnectError("params.bad: not an input", Code.InvalidArgument);
    const enqueuedAtMs = request.enqueuedAtMs ?? 0;
    return {
      action,
      dispatch: {
        runId: sortableRunId(),
        reverseTs: String(9_999_999_999_999 - enqueuedAtMs).padStart(13, "0"),
        orgId,
        bucket: shape.value.bucket,
        actionId: action.id,
        selection: request.selection!,
        params: request.params ?? {},
        batchId: request.batchId ?? "",
        enqueuedAtMs,
      },
    };
  }

  async *execute(
    prepared: PreparedAction,
    options: { signal?: AbortSignal; threadId?: string; onThread?: (threadId: string) => Promise<void> } = {},
  ): AsyncIterable<ActionEvent> {
    const { dispatch } = prepared;
    this.executed.push({ runId: dispatch.runId, threadId: options.threadId });
    if (this.throwing.has(dispatch.runId)) throw new ConnectError("the script service is down", Code.Unavailable);
    this.executing++;
    this.maxExecuting = Math.max(this.maxExecuting, this.executing);
    try {
      const threadId = options.threadId ?? `thread-${++this.threadCount}`;
      await options.onThread?.(threadId);
      const startedAtMs = 1_000;
      this.manifests.write(dispatch, { status: ActionRunStatus.RUNNING, threadId, startedAtMs: BigInt(startedAtMs) });
      yield event({
        case: "started",
        value: { actionId: dispatch.actionId, threadId, runId: dispatch.runId, startedAtMs: BigInt(startedAtMs) },
      });
      this.threads?.yieldValue(threadId, { step: 1 });
      yield event({ case: "progress", value: { stepPath: "0", stepName: "tick", value: { step: 1 } } });
      await this.gate(dispatch.runId).wait(options.signal);
      if (options.signal?.aborted) {
        this.aborted.push(dispatch.runId);
        // As the real runner does: an aborted run ends with the abort as its error.
        if (this.throwOnAbort) throw options.signal.reason;
        return;
      }
      this.threads?.end(threadId);
      this.manifests.write(dispatch, {
        status: ActionRunStatus.COMPLETED,
        threadId,
        startedAtMs: BigInt(startedAtMs),
        durationMs: 5n,
        outputLocation: { case: "outputInline", value: { kind: { case: "stringValue", value: "echo" } } },
      });
      yield event({ case: "completed", value: { output: { echoed: dispatch.params }, durationMs: 5n } });
    } finally {
      this.executing--;
    }
  }

  async failDispatch(dispatch: ActionDispatch, error: string): Promise<void> {
    this.failed.push({ runId: dispatch.runId, error });
    this.manifests.write(dispatch, { status: ActionRunStatus.FAILED, error });
  }
}

/** Polls `check` until it holds (or fails the test after a while). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
