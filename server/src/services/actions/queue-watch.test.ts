import { describe, expect, it } from "vitest";
import type { ActionQueueStore, QueueRow } from "./action-queue-store.js";
import { createRunEventHub } from "./queue-event-hub.js";
import { startedEvent } from "./queue-manifest-events.js";
import { createRunWatch } from "./queue-watch.js";

const unused = () => {
  throw new Error("not used by this test");
};

describe("a watch of a queued run", () => {
  it("sees a run that begins here while it is reading the queue row, without waiting for its poll", async () => {
    const hub = createRunEventHub();
    const row = { orgId: "org", bucket: "docs", runId: "run-1", status: "queued", reverseTs: "1" } as QueueRow;
    let reads = 0;
    const store = {
      // The watch finds the run queued; then the worker begins it while the watch is reading the
      // row again, which still says queued.
      async get() {
        if (++reads === 2) {
          hub.begin("run-1");
          hub.publish("run-1", startedEvent("extract_text", "thread-1", "run-1", 1));
        }
        return row;
      },
    } as unknown as ActionQueueStore;
    const watch = createRunWatch({
      store,
      hub,
      manifests: { read: unused, find: unused },
      threads: { yields: unused },
      catalog: { get: () => undefined },
      // A missed start would wait a minute, far past the test's timeout.
      pollMs: 60_000,
    });
    const events = watch("org", "docs", "run-1", new AbortController().signal)[Symbol.asyncIterator]();
    expect((await events.next()).value?.event.case).toBe("started");
    await events.return?.(undefined);
  }, 5_000);
});
