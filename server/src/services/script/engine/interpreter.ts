import type { JsonObject } from "@bufbuild/protobuf";
import { BindingScope, type StepBinding } from "../dsl/expressions.js";
import { effectivePolicy, LLM_TOOL, retryDelayMs, type JsonValue, type ScriptDocument, type Step } from "../dsl/script-document.js";
import { ToolError } from "../tools/tool-error.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { ArtifactStore } from "../threads/artifact-store.js";
import type { EventWrite, StepRow, StepWrite, ThreadRow, ThreadStore } from "../threads/thread-store.js";
import { Cancellation, LeaseLost, StepFailure, Suspension } from "./run-outcome.js";
import { shareEventLoop } from "./loop-share.js";
import { StepScope } from "./step-scope.js";
import { ThreadBudget, type ThreadLimits } from "./thread-budget.js";

export interface InterpreterDeps {
  readonly store: ThreadStore;
  /** Records a step while this worker holds the lease; throws LeaseLost otherwise. */
  saveStep(step: Parameters<ThreadStore["saveStep"]>[0]): Promise<void>;
  /** Starts a step (row, thread position, event) in one round trip, as ThreadStore.beginStep. */
  beginStep(step: StepWrite, event: EventWrite): Promise<"started" | "cancelled" | "lost">;
  /** Ends a step (row, event) in one round trip; false when the lease is gone. */
  finishStep(step: Parameters<ThreadStore["finishStep"]>[1], event: EventWrite): Promise<boolean>;
  readonly tools: ToolRegistry;
  /** Where artifact.write puts a thread's files. */
  readonly artifacts: Pick<ArtifactStore, "write">;
  /** Records an event and wakes the thread's watchers. */
  emit(kind: string, stepPath: string, payload: Record<string, unknown>): Promise<void>;
  /** Aborted when the lease is lost, the deadline passes or the server stops. */
  readonly signal: AbortSignal;
  now(): number;
  /** The run's memory, concurrency and expression limits; default DEFAULT_THREAD_LIMITS. */
  readonly limits?: ThreadLimits;
}

/**
 * Runs a thread's document from the top, replaying what the database says already happened:
 * a completed step is not run again (its saved output is bound instead), so a thread picked up
 * after a crash, a wait or a resume continues exactly after its last completed step. Step paths
 * follow docs/script-dsl.md and depend only on the document, so they are stable across runs.
 */
export async function runThread(thread: ThreadRow, document: ScriptDocument, deps: InterpreterDeps): Promise<JsonValue> {
  const recorded = new Map((await deps.store.steps(thread.id)).map((row) => [row.stepPath, row]));
  const budget = new ThreadBudget(deps.limits);
  const runner = new Runner(thread, document, deps, recorded, budget);
  const scope = StepScope.root({ inputs: thread.input as JsonValue, env: thread.env, thread: { id: thread.id, metadata: thread.metadata }, limits: budget.limits.expressions });
  const last = await runner.runList(document.steps, "", scope);
  if (!document.output) return last;
  await shareEventLoop();
  return document.output.evaluate(scope.bindings());
}

class Runner {
  /** The resume override goes to the first failed or paused step met, once. */
  private override: JsonValue | undefined;

  constructor(
    private readonly thread: ThreadRow,
    private readonly document: ScriptDocument,
    private readonly deps: InterpreterDeps,
    private readonly recorded: Map<string, StepRow>,
    private readonly budget: ThreadBudget,
  ) {
    this.override = (thread.resumeOverride ?? undefined) as JsonValue | undefined;
  }

  /** Runs a list; its result is the output of its last completed step. */
  async runList(steps: readonly Step[], base: string, scope: StepScope): Promise<JsonValue> {
    let last: JsonValue = null;
    let lastPath: string | undefined;
    // The list's outputs count against the memory limit until it ends; then only its result does.
    const held = this.budget.list(base.slice(0, Math.max(0, base.lastIndexOf("."))));
    try {
      for (const [index, step] of steps.entries()) {
        const path = base === "" ? String(index) : `${base}.${index}`;
        const binding = await this.runStep(step, path, base, scope);
        held.settle(path, binding.output);
        scope.steps[step.id] = binding;
        if (binding.status === "completed") [last, lastPath] = [binding.output, path];
      }
      return last;
    } finally {
      held.close(lastPath);
    }
  }

  private async runStep(step: Step, path: string, parentPath: string, scope: StepScope): Promise<StepBinding> {
    const row = this.recorded.get(path);
    if (row?.status === "completed") {
      if (step.primitive === "set") Object.assign(scope.vars, row.output as JsonObject);
      return { output: row.output as JsonValue, status: "completed", error: null };
    }
    if (row?.status === "skipped") return { output: null, status: "skipped", error: null };
    // A failure that continueOnError tolerated stays as it was; the one that failed the thread runs again.
    if (row?.status === "failed" && step.continueOnError) return { output: null, status: "failed", error: row.error };

    const started = row?.startedAt || this.deps.now();
    const tool = step.primitive === "execute" ? step.execute.tool : step.primitive === "decide" && step.decide.strategy === "llm" ? LLM_TOOL : "";
    const identity = { threadId: this.thread.id, stepPath: path, stepId: step.id, name: step.name, primitive: step.primitive, tool, parentPath };
    const save = (patch: Partial<StepRow>) => this.deps.saveStep({ ...identity, orgId: this.thread.orgId, status: "running", startedAt: started, ...patch });
    try {
      // Threads share the event loop with every request: one piece of their work per turn.
      await shareEventLoop();
      if (step.when && !step.when.evaluateCondition(scope.bindings())) {
        await this.checkCancel(path);
        await save({ status: "skipped", finishedAt: this.deps.now() });
        return { output: null, status: "skipped", error: null };
      }
      const input = step.primitive === "execute" ? (this.takeOverride(row) ?? step.execute.input.evaluate(scope.bindings())) : null;
      // A step entered again while waiting or paused has started already; any other one starts now.
      if (row?.status === "waiting" || row?.status === "paused") await this.checkCancel(path);
      else await this.begin({ ...identity, input, startedAt: started });
      const output = await this.execute(step, path, scope, row, save, input as JsonObject | null);
      this.budget.hold(path, step.name, output);
      const finished = this.deps.now();
      const event = { kind: "stepCompleted", payload: { stepPath: path, name: step.name, durationMs: String(finished - started) }, at: finished };
      if (!(await this.deps.finishStep({ threadId: this.thread.id, stepPath: path, status: "completed", output, error: "", finishedAt: finished }, event))) {
        throw new LeaseLost("lease lost");
      }
      if (step.primitive === "set") Object.assign(scope.vars, output as JsonObject);
      return { output, status: "completed", error: null };
    } catch (error) {
      if (error instanceof Suspension || error instanceof Cancellation || error instanceof LeaseLost || this.deps.signal.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      await save({ status: "failed", error: message, finishedAt: this.deps.now() });
      await this.deps.emit("stepFailed", path, { stepPath: path, name: step.name, error: message });
      if (step.continueOnError) return { output: null, status: "failed", error: message };
      throw error instanceof StepFailure ? error : new StepFailure(message, path, step.name);
    }
  }

  /** Starts a step in one round trip; a pending cancel or a lost lease stops the run instead. */
  private async begin(step: StepWrite): Promise<void> {
    const at = this.deps.now();
    const event = { kind: "stepStarted", payload: { stepPath: step.stepPath, name: step.name, primitive: step.primitive, tool: step.primitive === "execute" ? step.tool : "" }, at };
    const outcome = await this.deps.beginStep(step, event);
    if (outcome === "lost") throw new LeaseLost("lease lost");
    if (outcome === "cancelled") await this.checkCancel(step.stepPath);
  }

  private async execute(
    step: Step,
    path: string,
    scope: StepScope,
    row: StepRow | undefined,
    save: (patch: Partial<StepRow>) => Promise<void>,
    input: JsonObject | null,
  ): Promise<JsonValue> {
    await shareEventLoop();
    const bindings = scope.bindings();
    switch (step.primitive) {
      case "execute":
        return this.callTool(step, path, step.execute.tool, input ?? {});
      case "set": {
        // One scope: the values share one conversion of the bindings and one expression budget.
        const moment = new BindingScope(bindings);
        const values: JsonObject = {};
        for (const [name, template] of Object.entries(step.set.values)) values[name] = template.evaluate(moment);
        return values;
      }
      case "fail":
        throw new StepFailure(String(step.fail.message.evaluate(bindings)), path, step.name);
      case "yield": {
        const value = step.yield.value.evaluate(bindings);
        const sequence = await this.deps.store.nextYieldSequence(this.thread.id);
        await this.deps.emit("yielded", path, {
          stepPath: path,
          name: step.name,
          valueData: Buffer.from(JSON.stringify(value)).toString("base64"),
          sequence,
          timestampMs: String(this.deps.now()),
        });
        return value;
      }
      case "wait":
        return this.wait(step, path, row, bindings, save);
      case "approval":
        return this.approval(step, path, row, bindings, save);
      case "decide":
        return this.decide(step, path, scope, row, save);
      case "iterate":
        return this.iterate(step, path, scope);
      case "parallel":
        return this.parallel(step, path, scope);
    }
  }

  /** One tool call with the step's timeout and retry policy; the idempotency key is `thread:path`. */
  private async callTool(step: Step, path: string, tool: string, input: JsonObject): Promise<JsonValue> {
    const policy = effectivePolicy(this.document, step);
    const attempts = policy.retry?.maxAttempts ?? 1;
    for (let attempt = 1; ; attempt++) {
      const signals = [this.deps.signal, ...(policy.timeout ? [AbortSignal.timeout(policy.timeout)] : [])];
      try {
        return await this.deps.tools.invoke(this.thread.orgId, tool, input, {
          signal: AbortSignal.any(signals),
          idempotencyKey: `${this.thread.id}:${path}`,
          threadId: this.thread.id,
          stepPath: path,
          env: this.thread.env,
          memory: this.budget.reads(path, step.name),
          writeArtifact: async (name, contentType, bytes) => {
            await this.deps.artifacts.write({ threadId: this.thread.id, orgId: this.thread.orgId, stepPath: path }, name, contentType, bytes);
          },
        });
      } catch (error) {
        const permanent = error instanceof ToolError && (error.reason === "invalid_input" || error.reason === "not_found");
        if (permanent || attempt >= attempts || this.deps.signal.aborted) throw error;
        await delay(retryDelayMs(policy.retry!, attempt), this.deps.signal);
      }
    }
  }

  private async wait(step: Extract<Step, { primitive: "wait" }>, path: string, row: StepRow | undefined, bindings: ReturnType<StepScope["bindings"]>, save: (patch: Partial<StepRow>) => Promise<void>): Promise<JsonValue> {
    const now = this.deps.now();
    let wakeAt = row?.status === "waiting" ? row.wakeAt : 0;
    if (wakeAt === 0) {
      const spec = step.wait;
      wakeAt = "forMs" in spec ? now + spec.forMs : "untilMs" in spec ? spec.untilMs : untilOf(spec.until.evaluate(bindings));
      await save({ status: "waiting", wakeAt });
    }
    if (now < wakeAt) throw new Suspension("wait", wakeAt, path);
    return { waitedMs: now - (row?.startedAt || now) };
  }

  private async approval(step: Extract<Step, { primitive: "approval" }>, path: string, row: StepRow | undefined, bindings: ReturnType<StepScope["bindings"]>, save: (patch: Partial<StepRow>) => Promise<void>): Promise<JsonValue> {
    if (row?.status !== "paused") {
      const prompt = step.approval.prompt ? step.approval.prompt.evaluate(bindings) : null;
      const wakeAt = step.approval.timeoutMs ? this.deps.now() + step.approval.timeoutMs : 0;
      await save({ status: "paused", input: { prompt } as never, wakeAt });
      throw new Suspension("approval", wakeAt, path);
    }
    // Paused before: either a person resumed the thread (with or without a verdict) or the
    // approval's timeout woke it (the thread was still PAUSED when claimed).
    if (this.thread.status === "paused") {
      if (row.wakeAt > 0 && this.deps.now() >= row.wakeAt) {
        if (step.approval.onTimeout === "continue") return { approved: false, timed_out: true, comment: null };
        throw new StepFailure(`approval timed out`, path, step.name);
      }
      throw new Suspension("approval", row.wakeAt, path);
    }
    const verdict = this.takeOverride(row);
    const approved = !(isObject(verdict) && verdict.approved === false);
    const comment = isObject(verdict) && typeof verdict.comment === "string" ? verdict.comment : null;
    if (!approved) throw new StepFailure(`approval rejected${comment ? `: ${comment}` : ""}`, path, step.name);
    return { approved: true, timed_out: false, comment };
  }

  private async decide(step: Extract<Step, { primitive: "decide" }>, path: string, scope: StepScope, row: StepRow | undefined, save: (patch: Partial<StepRow>) => Promise<void>): Promise<JsonValue> {
    // The decision is saved before the branch runs, so a resumed thread takes the same branch
    // and never asks a model twice.
    let decision = (row?.input as { decision?: Decision } | null)?.decision;
    if (!decision) {
      decision = step.decide.strategy === "rule" ? this.ruleDecision(step, scope) : await this.llmDecision(step, path, scope);
      await save({ input: { decision } as never });
      await this.deps.emit("decision", path, { strategy: decision.strategy, chosenBranch: decision.chosen_branch, reasoning: decision.reasoning });
    }
    const index = step.decide.branches.findIndex((b) => b.name === decision.chosen_branch);
    const result = index === -1 ? null : await this.runList(step.decide.branches[index]!.steps, `${path}.${index}`, scope.child());
    return { strategy: decision.strategy, chosen_branch: decision.chosen_branch, reasoning: decision.reasoning, result };
  }

  private ruleDecision(step: Extract<Step, { primitive: "decide" }>, scope: StepScope): Decision {
    const bindings = new BindingScope(scope.bindings());
    for (const branch of step.decide.branches) {
      if (!branch.default && branch.when?.evaluateCondition(bindings)) {
        return { strategy: "rule", chosen_branch: branch.name, reasoning: `condition ${branch.when.source} matched` };
      }
    }
    const fallback = step.decide.branches.find((b) => b.default);
    return { strategy: "rule", chosen_branch: fallback?.name ?? "", reasoning: fallback ? "no condition matched: default branch" : "no condition matched" };
  }

  private async llmDecision(step: Extract<Step, { primitive: "decide" }>, path: string, scope: StepScope): Promise<Decision> {
    const names = step.decide.branches.map((b) => b.name);
    const question = step.decide.prompt ? String(step.decide.prompt.evaluate(scope.bindings())) : "";
    const prompt = [
      question,
      "",
      "Choose exactly one of these branches:",
      ...step.decide.branches.map((b) => `- ${b.name}${b.description ? `: ${b.description}` : ""}`),
      "",
      'Answer with JSON only: {"branch": "<one of the names>", "reasoning": "<one sentence>"}',
    ].join("\n");
    const answer = (await this.callTool(step, path, LLM_TOOL, {
      prompt,
      responseFormat: "json",
      ...(step.decide.model ? { model: step.decide.model } : {}),
    })) as { json?: { branch?: unknown; reasoning?: unknown } };
    const branch = typeof answer?.json?.branch === "string" ? answer.json.branch : "";
    if (!names.includes(branch)) throw new StepFailure(`the model chose ${JSON.stringify(branch)}, which is not one of ${names.join(", ")}`, path, step.name);
    return { strategy: "llm", chosen_branch: branch, reasoning: typeof answer.json?.reasoning === "string" ? answer.json.reasoning : "" };
  }

  private async iterate(step: Extract<Step, { primitive: "iterate" }>, path: string, scope: StepScope): Promise<JsonValue> {
    const items = step.iterate.over.evaluate(scope.bindings());
    if (!Array.isArray(items)) throw new StepFailure(`iterate: ${step.iterate.over.source} is not a list`, path, step.name);
    const results: JsonValue[] = new Array(items.length).fill(null);
    let next = 0;
    let failure: unknown;
    // At most maxConcurrency iterations at a time, and beyond the first lane only while the
    // thread has a free iteration slot; after a failure no new one starts. Once every item is
    // taken, lanes still waiting for a slot give up (they would hold the loop open for ever).
    const drained = new AbortController();
    const stopWaiting = AbortSignal.any([drained.signal, this.deps.signal]);
    const lane = async (first: boolean) => {
      while (failure === undefined && next < items.length) {
        let release: () => void;
        try {
          release = await this.budget.iteration(first, stopWaiting);
        } catch {
          return;
        }
        if (failure !== undefined || next >= items.length) return release();
        const k = next++;
        if (next >= items.length) drained.abort();
        try {
          results[k] = await this.runList(step.iterate.steps, `${path}.${k}`, scope.child({ [step.iterate.as]: items[k]!, index: k }));
        } catch (error) {
          failure ??= error;
          drained.abort();
        } finally {
          release();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(step.iterate.maxConcurrency, items.length) }, (_, index) => lane(index === 0)));
    if (failure !== undefined) throw failure;
    return results;
  }

  private async parallel(step: Extract<Step, { primitive: "parallel" }>, path: string, scope: StepScope): Promise<JsonValue> {
    const outcomes = await Promise.allSettled(step.parallel.branches.map((branch, b) => this.runList(branch.steps, `${path}.${b}`, scope.child())));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (failed) throw failed.reason;
    return Object.fromEntries(step.parallel.branches.map((branch, b) => [branch.name, (outcomes[b] as PromiseFulfilledResult<JsonValue>).value]));
  }

  /** The resume override belongs to the step that failed or paused; it is used once. */
  private takeOverride(row: StepRow | undefined): JsonValue | undefined {
    if (this.override === undefined || (row?.status !== "failed" && row?.status !== "paused")) return undefined;
    const value = this.override;
    this.override = undefined;
    return value;
  }

  private async checkCancel(path: string): Promise<void> {
    const { requested, reason } = await this.deps.store.cancelRequested(this.thread.id);
    if (requested) throw new Cancellation(reason, path);
  }
}

interface Decision {
  strategy: "rule" | "llm";
  chosen_branch: string;
  reasoning: string;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function untilOf(value: JsonValue): number {
  const at = typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at)) throw new Error(`wait until: ${JSON.stringify(value)} is neither epoch milliseconds nor an RFC 3339 time`);
  return at;
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
