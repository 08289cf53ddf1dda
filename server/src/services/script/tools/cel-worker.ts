import { parentPort } from "node:worker_threads";
import { evaluateTransform } from "./cel-transform.js";
import { ToolError } from "./tool-error.js";
import type { ToolErrorReason } from "./tool-error.js";
import type { JsonValue } from "./tool.js";

/**
 * The body of a pool worker (cel-worker-pool.ts): announces itself ready, then evaluates one
 * transform per message. Errors travel as reason and message, since a ToolError does not survive
 * the structured clone between threads.
 */

export interface TransformTask {
  readonly expression: string;
  readonly data: JsonValue;
}

export type WorkerMessage =
  | { readonly kind: "ready" }
  | { readonly kind: "result"; readonly value: JsonValue }
  | { readonly kind: "error"; readonly reason: ToolErrorReason; readonly message: string };

const port = parentPort;
if (port === null) throw new Error("cel-worker.ts runs as a worker thread only");

port.on("message", (task: TransformTask) => {
  let answer: WorkerMessage;
  try {
    answer = { kind: "result", value: evaluateTransform(task.expression, task.data) };
  } catch (error) {
    // A RangeError (stack overflow on deep data) is as much the expression's failure as a CEL error.
    answer =
      error instanceof ToolError
        ? { kind: "error", reason: error.reason, message: error.message }
        : {
            kind: "error",
            reason: "failed",
            message: `json.transform: ${error instanceof Error ? error.message : String(error)}`,
          };
  }
  port.postMessage(answer);
});
port.postMessage({ kind: "ready" } satisfies WorkerMessage);
