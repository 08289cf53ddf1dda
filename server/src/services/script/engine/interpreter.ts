import type { JsonObject } from "@bufbuild/protobuf";
import { BindingScope, type StepBinding } from "../dsl/expressions.js";
import type { CompiledTemplate } from "../dsl/templates.js";
import {
  effectivePolicy,
  LLM_TOOL,
  retryDelayMs,
  type JsonValue,
  type ScriptDocument,
  type Step,
} from "../dsl/script-document.js";
import { ToolError } from "../tools/tool-error.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { ArtifactStore } from "../threads/artifact-store.js";
import { threadEvent, type ThreadEventRecord } from "../threads/thread-events.js";
import type { EventWrite, StepEnd, StepRow, StepWrite, ThreadRow, ThreadStore } from "../threads/thread-store.js";
import { llmDecision, llmDecisionRequest, ruleDecision, type Decision } from "./decision.js";
import { describeFailure } from "./failure-text.js";
import { Cancellation, containerStop, LeaseLost, StepFailure, Suspension } from "./run-outcome.js";
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
  finishStep(step: StepEnd, event: EventWrite): Promise<boolean>;
  readonly tools: ToolRegistry;
  /** Where artifact.write puts a thread's files. */
  readonly artifacts: Pick<ArtifactStore, "write">;
  /** Records an event and wakes the thread's watchers. */
  emit(event: ThreadEventRecord): Promise<void>;
  /** Aborted when the lease is lost, the deadline passes or the server stops. */
  readonly signal: AbortSignal;
  now(): number;
  /** The server log, for what a step's `error` must not show. */
  log(message: string, fields: Record<string, unknown>): void;
  /** The run's memory, concurrency and expression limits; default DEFAULT_THREAD_LIMITS. */
  readonly limits?: ThreadLimits;
}

/**
 * Runs a thread's document from the top, replaying what the database says already happened:
 * a completed step is not run again (its saved output is bound instead), so a thread picked up
 * after a crash, a wait or a resume continues exactly after its last completed step. Step paths
 * follow docs/script-dsl.md and depend only on the document, so they are stable across runs.
 */
export async function runThread(
  thread: ThreadRow,
  document: ScriptDocument,
  deps: InterpreterDeps,
): Promise<JsonValue> {
  const recorded = new Map((await deps.store.steps(thread.orgId, thread.id)).map((row) => [row.stepPath, row]));
  const budget = new ThreadBudget(deps.limits);
  const runner = new Runner(thread, document, deps, recorded, budget);
  const scope = StepScope.root({
    inputs: thread.input as JsonValue,
    env: thread.env,
    thread: { id: thread.id, metadata: thread.metadata },
    limits: budget.limits.expressions,
  });
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
      this.rebind(step, path, row, scope);
      return { output: row.output as JsonValue, status: "completed", error: null };
    }
    if (row?.status === "skipped") return { output: null, status: "skipped", error: null };
    // A failure that continueOnError tolerated stays as it was; the one that failed the thread runs again.
    if (row?.status === "failed" && step.continueOnError) return { output: null, status: "failed", error: row.error };

    const started = row?.startedAt || this.deps.now();
    const tool =
      step.primitive === "execute"
        ? step.execute.tool
        : step.primitive === "decide" && step.decide.strategy === "llm"
          ? LLM_TOOL
          : "";
    const identity = {
      orgId: this.thread.orgId,
      threadId: this.thread.id,
      stepPath: path,
      stepId: step.id,
      name: step.name,
      primitive: step.primitive,
      tool,
      parentPath,
    };
    const save = (patch: Partial<StepRow>) =>
      this.deps.saveStep({ ...identity, status: "running", startedAt: started, ...patch });
    try {
      // Threads share the event loop with every request: one piece of their work per turn.
      await shareEventLoop();
      if (step.when && !step.when.evaluateCondition(scope.bindings())) {
        await this.checkCancel(path);
        await save({ status: "skipped", finishedAt: this.deps.now() });
        return { output: null, status: "skipped", error: null };
      }
      const input = step.primitive === "execute" ? this.callInput(step.execute.input, row, scope) : null;
      // A step entered again while waiting or paused has started already; any other one starts now.
      if (row?.status === "waiting" || row?.status === "paused") await this.checkCancel(path);
      else await this.begin({ ...identity, input, startedAt: started });
      const output = await this.execute(step, path, scope, row, save, input as JsonObject | null);
      this.budget.hold(path, step.name, output);
      const finished = this.deps.now();
      const event = {
        ...threadEvent.stepCompleted({ stepPath: path, name: step.name }, finished - started),
        at: finished,
      };
      if (
        !(await this.deps.finishStep(
          {
            orgId: this.thread.orgId,
            threadId: this.thread.id,
            stepPath: path,
            status: "completed",
            output,
            error: "",
            finishedAt: finished,
          },
          event,
        ))
      ) {
        throw new LeaseLost("lease lost");
      }
      if (step.primitive === "set") Object.assign(scope.vars, output as JsonObject);
      return { output, status: "completed", error: null };
    } catch (error) {
      if (
        error instanceof Suspension ||
        error instanceof Cancellation ||
        error instanceof LeaseLost ||
        this.deps.signal.aborted
      )
        throw error;
      const failure = describeFailure(error);
      if (failure.internal)
        this.deps.log("step failed with an internal error", {
          threadId: this.thread.id,
          stepPath: path,
          ...failure.internal,
        });
      await save({ status: "failed", error: failure.text, finishedAt: this.deps.now() });
      await this.deps.emit(threadEvent.stepFailed({ stepPath: path, name: step.name }, failure.text));
      if (step.continueOnError) return { output: null, status: "failed", error: failure.text };
      throw error instanceof StepFailure ? error : new StepFailure(failure.text, path, step.name);
    }
  }

  /** Starts a step in one round trip; a pending cancel or a lost lease stops the run instead. */
  private async begin(step: StepWrite): Promise<void> {
    const at = this.deps.now();
    const event = { ...threadEvent.stepStarted({ ...step, tool: step.primitive === "execute" ? step.tool : "" }), at };
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
        return this.callTool(step, path, step.execute.tool, input ?? {}, row, save);
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
        const sequence = await this.deps.store.nextYieldSequence(this.thread.orgId, this.thread.id);
        await this.deps.emit(
          threadEvent.yielded({ stepPath: path, name: step.name }, value, sequence, this.deps.now()),
        );
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

  /**
   * An execute step's input: a resume override if one is due to this step; the input recorded at
   * the first attempt when a retry is due (the override was used up then, and re-evaluating the
   * template would drop it); else the template's value.
   */
  private callInput(template: CompiledTemplate, row: StepRow | undefined, scope: StepScope): JsonValue {
    if (row?.status === "waiting") return row.input as JsonValue;
    return this.takeOverride(row) ?? template.evaluate(scope.bindings());
  }

  /**
   * One attempt of a tool call, with the step's timeout; the idempotency key is `thread:path`. A
   * retryable failure with attempts left saves the next attempt's number and due time on the
   * step (status `waiting`) and suspends the thread until then, so a backoff holds neither a
   * worker slot nor the lease. The run that claims the thread again finds the step waiting and
   * makes that attempt once it is due; a claim before then (a crash between the save and the
   * release) only suspends again. Attempts are thus neither skipped nor started afresh.
   */
  private async callTool(
    step: Step,
    path: string,
    tool: string,
    input: JsonObject,
    row: StepRow | undefined,
    save: (patch: Partial<StepRow>) => Promise<void>,
  ): Promise<JsonValue> {
    const policy = effectivePolicy(this.document, step);
    const retryDue = row?.status === "waiting" && row.wakeAt > 0 ? row : undefined;
    if (retryDue && this.deps.now() < retryDue.wakeAt) throw new Suspension("retry", retryDue.wakeAt, path);
    const attempt = retryDue?.attempt ?? 1;
    try {
      return await this.deps.tools.invoke(this.thread.orgId, tool, input, {
        signal: policy.timeout
          ? AbortSignal.any([this.deps.signal, AbortSignal.timeout(policy.timeout)])
          : this.deps.signal,
        idempotencyKey: `${this.thread.id}:${path}`,
        threadId: this.thread.id,
        stepPath: path,
        env: this.thread.env,
        memory: this.budget.reads(path, step.name),
        writeArtifact: async (name, contentType, bytes) => {
          await this.deps.artifacts.write(
            { threadId: this.thread.id, orgId: this.thread.orgId, stepPath: path },
            name,
            contentType,
            bytes,
          );
        },
      });
    } catch (error) {
      const permanent =
        error instanceof ToolError && (error.reason === "invalid_input" || error.reason === "not_found");
      if (permanent || !policy.retry || attempt >= policy.retry.maxAttempts || this.deps.signal.aborted) throw error;
      const wakeAt = this.deps.now() + retryDelayMs(policy.retry, attempt);
      await save({ status: "waiting", attempt: attempt + 1, wakeAt, error: describeFailure(error).text });
      throw new Suspension("retry", wakeAt, path);
    }
  }

  private async wait(
    step: Extract<Step, { primitive: "wait" }>,
    path: string,
    row: StepRow | undefined,
    bindings: ReturnType<StepScope["bindings"]>,
    save: (patch: Partial<StepRow>) => Promise<void>,
  ): Promise<JsonValue> {
    const now = this.deps.now();
    let wakeAt = row?.status === "waiting" ? row.wakeAt : 0;
    if (wakeAt === 0) {
      const spec = step.wait;
      wakeAt =
        "forMs" in spec ? now + spec.forMs : "untilMs" in spec ? spec.untilMs : untilOf(spec.until.evaluate(bindings));
      await save({ status: "waiting", wakeAt });
    }
    if (now < wakeAt) throw new Suspension("wait", wakeAt, path);
    return { waitedMs: now - (row?.startedAt || now) };
  }

  private async approval(
    step: Extract<Step, { primitive: "approval" }>,
    path: string,
    row: StepRow | undefined,
    bindings: ReturnType<StepScope["bindings"]>,
    save: (patch: Partial<StepRow>) => Promise<void>,
  ): Promise<JsonValue> {
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

  private async decide(
    step: Extract<Step, { primitive: "decide" }>,
    path: string,
    scope: StepScope,
    row: StepRow | undefined,
    save: (patch: Partial<StepRow>) => Promise<void>,
  ): Promise<JsonValue> {
    let decision = (row?.input as { decision?: Decision } | null)?.decision;
    if (!decision) {
      decision =
        step.decide.strategy === "rule"
          ? ruleDecision(step, new BindingScope(scope.bindings()))
          : llmDecision(
              step,
              path,
              await this.callTool(step, path, LLM_TOOL, llmDecisionRequest(step, scope.bindings()), row, save),
            );
      await save({ input: { decision } as never });
      await this.deps.emit(
        threadEvent.decision(path, {
          strategy: decision.strategy,
          chosenBranch: decision.chosen_branch,
          reasoning: decision.reasoning,
        }),
      );
    }
    const index = step.decide.branches.findIndex((b) => b.name === decision.chosen_branch);
    const branch = scope.child();
    const result =
      index === -1 ? null : await this.runList(step.decide.branches[index]!.steps, `${path}.${index}`, branch);
    scope.adopt(branch);
    return {
      strategy: decision.strategy,
      chosen_branch: decision.chosen_branch,
      reasoning: decision.reasoning,
      result,
    };
  }

  private async iterate(
    step: Extract<Step, { primitive: "iterate" }>,
    path: string,
    scope: StepScope,
  ): Promise<JsonValue> {
    const items = step.iterate.over.evaluate(scope.bindings());
    if (!Array.isArray(items))
      throw new StepFailure(`iterate: ${step.iterate.over.source} is not a list`, path, step.name);
    const results: JsonValue[] = new Array(items.length).fill(null);
    let next = 0;
    const stops: unknown[] = [];
    // At most maxConcurrency iterations at a time, and beyond the first lane only while the
    // thread has a free iteration slot; after a failure (or a suspension) no new one starts. Once
    // every item is taken, lanes still waiting for a slot give up (they would hold the loop open for ever).
    const drained = new AbortController();
    const stopWaiting = AbortSignal.any([drained.signal, this.deps.signal]);
    const lane = async (first: boolean) => {
      while (stops.length === 0 && next < items.length) {
        let release: () => void;
        try {
          release = await this.budget.iteration(first, stopWaiting);
        } catch {
          return;
        }
        if (stops.length > 0 || next >= items.length) return release();
        const k = next++;
        if (next >= items.length) drained.abort();
        try {
          results[k] = await this.runList(
            step.iterate.steps,
            `${path}.${k}`,
            scope.child({ [step.iterate.as]: items[k]!, index: k }),
          );
        } catch (error) {
          stops.push(error);
          drained.abort();
        } finally {
          release();
        }
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(step.iterate.maxConcurrency, items.length) }, (_, index) => lane(index === 0)),
    );
    if (stops.length > 0) throw containerStop(stops);
    return results;
  }

  private async parallel(
    step: Extract<Step, { primitive: "parallel" }>,
    path: string,
    scope: StepScope,
  ): Promise<JsonValue> {
    const branches = step.parallel.branches.map(() => scope.child());
    const outcomes = await Promise.allSettled(
      step.parallel.branches.map((branch, b) => this.runList(branch.steps, `${path}.${b}`, branches[b]!)),
    );
    const stops = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    if (stops.length > 0) throw containerStop(stops);
    for (const branch of branches) scope.adopt(branch);
    return Object.fromEntries(
      step.parallel.branches.map((branch, b) => [
        branch.name,
        (outcomes[b] as PromiseFulfilledResult<JsonValue>).value,
      ]),
    );
  }

  /**
   * What a completed step left in scope, bound again from the recorded rows when it is replayed:
   * a set step's variables, and the steps (and variables) of the branches a decide or parallel
   * step ran, which later steps may read. Nothing runs and nothing is written.
   */
  private rebind(step: Step, path: string, row: StepRow, scope: StepScope): void {
    if (step.primitive === "set") Object.assign(scope.vars, row.output as JsonObject);
    const chosen =
      step.primitive === "decide" ? (row.input as { decision?: Decision } | null)?.decision?.chosen_branch : undefined;
    const lists =
      step.primitive === "parallel"
        ? step.parallel.branches.map((branch, b) => [branch.steps, b] as const)
        : step.primitive === "decide"
          ? step.decide.branches.flatMap((branch, b) => (branch.name === chosen ? [[branch.steps, b] as const] : []))
          : [];
    for (const [steps, b] of lists) {
      for (const [index, child] of steps.entries()) {
        const childPath = `${path}.${b}.${index}`;
        const recorded = this.recorded.get(childPath);
        if (recorded?.status === "completed") this.rebind(child, childPath, recorded, scope);
        if (recorded?.status === "completed" || recorded?.status === "skipped" || recorded?.status === "failed") {
          scope.steps[child.id] = {
            output: recorded.status === "completed" ? (recorded.output as JsonValue) : null,
            status: recorded.status,
            error: recorded.status === "failed" ? recorded.error : null,
          };
        }
      }
    }
  }

  /** The resume override belongs to the step that failed or paused; it is used once. */
  private takeOverride(row: StepRow | undefined): JsonValue | undefined {
    if (this.override === undefined || (row?.status !== "failed" && row?.status !== "paused")) return undefined;
    const value = this.override;
    this.override = undefined;
    return value;
  }

  private async checkCancel(path: string): Promise<void> {
    const { requested, reason } = await this.deps.store.cancelRequested(this.thread.orgId, this.thread.id);
    if (requested) throw new Cancellation(reason, path);
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function untilOf(value: JsonValue): number {
  const at = typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at))
    throw new Error(`wait until: ${JSON.stringify(value)} is neither epoch milliseconds nor an RFC 3339 time`);
  return at;
}
