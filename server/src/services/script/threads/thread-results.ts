import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  StepResultChunkSchema,
  ThreadOutputChunkSchema,
  type StepResultChunk,
  type ThreadOutputChunk,
} from "../../../../../gen/platform/script/v1/result_stream_pb.js";
import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import { stepNotFound, type ThreadMethodsContext } from "./thread-access.js";
import { jsonBytes, runTime, threadStatusOf, toStepDetail, toStepSummary, toYieldedValue } from "./thread-messages.js";
import { checkStepPath, chunkBytesOf } from "./thread-requests.js";
import { createThreadApiStore } from "./thread-api-store.js";

type ResultMethods = Pick<ScriptServiceImplementation, "getThreadResult" | "streamThreadResult" | "streamStepResult">;

/** GetThreadResult's cap on output_data (and on step input and output data): 4 MiB. */
export const UNARY_OUTPUT_CAP = 4 * 1024 * 1024;

/** GetThreadResult's cap on yielded_values: the 100 most recent, like `docker logs --tail 100`. */
export const YIELDED_VALUES_CAP = 100;

/** GetThreadResult, StreamThreadResult and StreamStepResult: a thread's content, read back. */
export function createResultMethods(context: ThreadMethodsContext): ResultMethods {
  const { store } = context;
  const results = createThreadApiStore(context.db);

  return {
    async getThreadResult(request, handlerContext) {
      const { orgId } = principalOf(handlerContext);
      checkStepPath(request.stepPath, false);
      const thread = await context.requireThread(orgId, request.threadId);
      const now = context.now();
      const full = !request.metadataOnly;
      // The final output exists once the thread is COMPLETED; before, output_data stays empty.
      const output =
        thread.status === "completed" ? jsonBytes(await store.output(orgId, thread.id)) : new Uint8Array(0);
      const summaries = await results.stepSummaries(orgId, thread.id);
      const details = request.stepPath === "" ? [] : await results.stepTree(orgId, thread.id, request.stepPath);
      if (request.stepPath !== "" && details[0]?.stepPath !== request.stepPath)
        throw stepNotFound(thread.id, request.stepPath);
      const yields = await results.yields(orgId, thread.id, full ? YIELDED_VALUES_CAP : 0);
      return {
        threadId: thread.id,
        status: threadStatusOf(thread.status),
        outputData: full ? output.subarray(0, UNARY_OUTPUT_CAP) : new Uint8Array(0),
        durationMs: BigInt(runTime(thread.startedAt, thread.finishedAt, now)),
        // Counted as the engine counts ThreadCompleted `steps_executed`: the completed steps.
        stepsExecuted: summaries.filter((step) => step.status === "completed").length,
        steps: full && !request.outputOnly ? summaries.map((step) => toStepSummary(step, now)) : [],
        stepDetails: full ? details.map((step) => toStepDetail(step, UNARY_OUTPUT_CAP, now)) : [],
        outputTotalBytes: BigInt(output.length),
        outputTruncated: output.length > UNARY_OUTPUT_CAP,
        yieldedValues: yields.recent.map(toYieldedValue),
        totalYielded: yields.total,
        yieldsTruncated: yields.total > yields.recent.length,
        warnings: [...thread.warnings],
      };
    },

    async *streamThreadResult(request, handlerContext): AsyncGenerator<ThreadOutputChunk> {
      const { orgId } = principalOf(handlerContext);
      const chunkBytes = chunkBytesOf(request.maxChunkBytes);
      const thread = await context.requireThread(orgId, request.threadId);
      const status = threadStatusOf(thread.status);
      const message = (chunk: MessageInitShape<typeof ThreadOutputChunkSchema>["chunk"]) =>
        create(ThreadOutputChunkSchema, { threadId: thread.id, chunk });
      // Rather than block until the end (WatchThread is for waiting), an unfinished thread gets
      // its status alone.
      if (thread.status !== "completed") {
        yield message({ case: "meta", value: { status, totalBytes: 0n, totalChunks: 0 } });
        return;
      }
      const output = jsonBytes(await store.output(orgId, thread.id));
      const chunks = pieces(output, chunkBytes);
      yield message({ case: "meta", value: { status, totalBytes: BigInt(output.length), totalChunks: chunks.length } });
      for (const [index, data] of chunks.entries()) {
        yield message({
          case: "output",
          value: { data, totalBytes: BigInt(output.length), chunkIndex: index, isFinal: index === chunks.length - 1 },
        });
      }
    },

    async *streamStepResult(request, handlerContext): AsyncGenerator<StepResultChunk> {
      const { orgId } = principalOf(handlerContext);
      const chunkBytes = chunkBytesOf(request.maxChunkBytes);
      checkStepPath(request.stepPath, false);
      const thread = await context.requireThread(orgId, request.threadId);
      const now = context.now();
      const all = await results.stepSummaries(orgId, thread.id);
      const steps = request.stepPath === "" ? all : all.filter((step) => step.stepPath === request.stepPath);
      if (request.stepPath !== "" && steps.length === 0) throw stepNotFound(thread.id, request.stepPath);
      const message = (chunk: MessageInitShape<typeof StepResultChunkSchema>["chunk"]) =>
        create(StepResultChunkSchema, { threadId: thread.id, chunk });

      yield message({
        case: "meta",
        value: { totalSteps: steps.length, steps: steps.map((step) => toStepSummary(step, now)) },
      });
      // One step's data in memory at a time: inputs and outputs can be megabytes each.
      for (const summary of steps) {
        const row = await store.step(orgId, thread.id, summary.stepPath);
        if (!row) continue;
        yield message({ case: "step", value: toStepDetail(row, chunkBytes, now) });
        for (const [field, value] of [
          ["input", row.input],
          ["output", row.output],
        ] as const) {
          const bytes = jsonBytes(value);
          if (bytes.length <= chunkBytes) continue;
          const chunks = pieces(bytes, chunkBytes);
          for (const [index, data] of chunks.entries()) {
            yield message({
              case: "data",
              value: {
                stepPath: row.stepPath,
                field,
                data,
                totalBytes: BigInt(bytes.length),
                chunkIndex: index,
                isFinal: index === chunks.length - 1,
              },
            });
          }
        }
      }
    },
  };
}

/** `bytes` cut into pieces of `size`; one empty piece for empty bytes, so there is always a final one. */
function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  if (bytes.length === 0) return [bytes];
  const result: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) result.push(bytes.subarray(offset, offset + size));
  return result;
}
