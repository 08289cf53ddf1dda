import { create } from "@bufbuild/protobuf";
import { StepEventSchema, type StepEvent, type ThreadEvent } from "../../../../../gen/platform/script/v1/events_pb.js";
import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import { parseScript } from "../dsl/parse-script.js";
import { stepAtPath } from "../dsl/step-paths.js";
import { createScriptStore } from "../script-store.js";
import { EventFeed } from "./event-feed.js";
import { stepNotFound, type ThreadMethodsContext } from "./thread-access.js";
import {
  eventKind,
  FINISHED_STEP,
  TERMINAL_EVENT_KINDS,
  toStepDone,
  toStepEvent,
  toStepSnapshot,
  toThreadEvent,
} from "./thread-messages.js";
import { checkStepPath } from "./thread-requests.js";
import type { EventRow, ThreadHeader } from "./thread-store.js";

type WatchMethods = Pick<ScriptServiceImplementation, "watchThread" | "watchStep">;

/** Step event kinds that end a step's run. */
const STEP_END_KINDS: ReadonlySet<string> = new Set(["stepCompleted", "stepFailed"]);

/**
 * WatchThread and WatchStep: replay what is recorded, then follow live events until the end (or
 * until the client goes away, which aborts the context's signal).
 */
export function createWatchMethods(context: ThreadMethodsContext): WatchMethods {
  const scripts = createScriptStore(context.db);

  /** Name and primitive of a step the thread has not reached, from its pinned script version. */
  async function plannedStep(
    thread: ThreadHeader,
    stepPath: string,
  ): Promise<{ name: string; primitive: string } | undefined> {
    const version = await scripts.getVersion(thread.orgId, thread.scriptName, thread.scriptVersion);
    const step = version ? stepAtPath(parseScript(version.source), stepPath) : undefined;
    return step ? { name: step.name, primitive: step.primitive } : undefined;
  }

  return {
    async *watchThread(request, handlerContext): AsyncGenerator<ThreadEvent> {
      const { orgId } = principalOf(handlerContext);
      await context.requireThread(orgId, request.threadId);
      const feed = new EventFeed(context, orgId, request.threadId, handlerContext.signal);
      try {
        for (;;) {
          for (const row of await feed.read()) {
            const event = toThreadEvent(row);
            if (event) yield event;
          }
          if (feed.aborted || (await feed.ended())) return;
          await feed.wait();
        }
      } finally {
        feed.close();
      }
    },

    async *watchStep(request, handlerContext): AsyncGenerator<StepEvent> {
      const { orgId } = principalOf(handlerContext);
      const thread = await context.requireThread(orgId, request.threadId);
      checkStepPath(request.stepPath, true);
      const path = request.stepPath;
      const feed = new EventFeed(context, orgId, thread.id, handlerContext.signal);
      try {
        // Events first, then the row: the engine records a step's row before its event, so the
        // row read second is at least as new as the events.
        const history = await feed.read();
        const row = await context.store.step(orgId, thread.id, path);
        const planned = row ? { name: row.name, primitive: row.primitive } : await plannedStep(thread, path);
        if (!planned) throw stepNotFound(thread.id, path);
        yield create(StepEventSchema, {
          threadId: thread.id,
          stepPath: path,
          timestampMs: BigInt(context.now()),
          event: { case: "snapshot", value: toStepSnapshot(row, planned) },
        });
        if (row && FINISHED_STEP.has(row.status)) return;

        for (const event of currentRun(history, path)) {
          const message = toStepEvent(event);
          if (message) yield message;
        }
        for (;;) {
          if (feed.aborted || (await feed.ended())) return;
          await feed.wait();
          for (const event of await feed.read()) {
            if (event.stepPath !== path) continue;
            const kind = eventKind(event);
            if (kind === "stepCompleted") {
              yield toStepDone(event, await context.store.step(orgId, thread.id, path));
              return;
            }
            const message = toStepEvent(event);
            if (message) yield message;
            if (kind === "stepFailed") return;
          }
        }
      } finally {
        feed.close();
      }
    },
  };
}

/**
 * The recorded events of the step's current run: those after its last `stepStarted`. When that run
 * has already ended although the row (read after the events) says the step is not finished, the
 * step was started again (a resume) and its new `stepStarted` is still to come: nothing of the old
 * run is replayed.
 */
function currentRun(history: readonly EventRow[], path: string): EventRow[] {
  const own = history.filter((event) => event.stepPath === path && !TERMINAL_EVENT_KINDS.has(eventKind(event)));
  let start = 0;
  own.forEach((event, index) => {
    if (eventKind(event) === "stepStarted") start = index + 1;
  });
  const run = own.slice(start);
  return run.some((event) => STEP_END_KINDS.has(eventKind(event))) ? [] : run;
}
