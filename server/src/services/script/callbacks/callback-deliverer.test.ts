import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSecretBox } from "../../../crypto/secret-box.js";
import {
  call,
  contextFor,
  EngineDouble,
  insertThread,
  openThreadTestKit,
  type ThreadTestKit,
} from "../threads/thread-test-kit.js";
import { threadEvent } from "../threads/thread-events.js";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { createCallbackDeliverer, RETRY_DELAYS_MS, type CallbackDeliverer } from "./callback-deliverer.js";
import { createCallbackOutbox } from "./callback-outbox.js";
import { createCallbackSigningKeys, formatSigningKey, type CallbackSigningKeys } from "./callback-signing-keys.js";

interface Posted {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

let kit: ThreadTestKit;
let keys: CallbackSigningKeys;
let deliverer: CallbackDeliverer | undefined;
let posted: Posted[];
let answers: (number | Error)[];
let orgId: string;

beforeEach(async () => {
  kit = await openThreadTestKit();
  // Standard Webhooks verifiers refuse timestamps far from their own clock: run on real time.
  kit.clock.ms = Date.now();
  keys = createCallbackSigningKeys({
    db: kit.database.db,
    box: createSecretBox(new Uint8Array(32).fill(7)),
    now: () => kit.clock.ms,
  });
  posted = [];
  answers = [];
  orgId = await kit.database.createOrganization();
});

afterEach(async () => {
  await deliverer?.stop();
  deliverer = undefined;
  await kit.close();
});

/** How many times the deliverer read its clock, and who waits for a count. */
let clockReads = 0;
let clockWaiters: { count: number; resolve: () => void }[] = [];

/**
 * Resolves after the deliverer's next `n` clock reads. A pass reads the clock once to claim what
 * is due, so while no attempt runs, `n` reads are `n` passes that looked for work.
 */
function clockReadsFromNow(n: number): Promise<void> {
  const count = clockReads + n;
  return new Promise((resolve) => clockWaiters.push({ count, resolve }));
}

function startDeliverer(): void {
  clockReads = 0;
  clockWaiters = [];
  deliverer = createCallbackDeliverer({
    db: kit.database.db,
    signals: kit.signals,
    keys,
    now: () => {
      clockReads++;
      for (const waiter of clockWaiters.filter((w) => w.count <= clockReads)) waiter.resolve();
      return kit.clock.ms;
    },
    pollMs: 20,
    jitter: () => 0.5,
    post: async (url, headers, body) => {
      posted.push({ url, headers, body });
      const answer = answers.shift() ?? 204;
      if (answer instanceof Error) throw answer;
      return { status: answer };
    },
  });
  deliverer.start();
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 250 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await check()).toBe(true);
}

/** A thread with a callback URL that a worker ran and ended as `status`. */
async function endedThread(status: "completed" | "failed", callbackUrl = "https://hooks.example.com/thread") {
  const thread = await insertThread(kit, orgId, { callbackUrl });
  await new EngineDouble(kit, thread).start();
  const event = {
    ...(status === "completed" ? threadEvent.completed(0, 0) : threadEvent.failed("boom", { stepPath: "", name: "" })),
    at: kit.clock.ms,
  };
  expect(
    await kit.store.endRun(
      thread.id,
      "test-worker",
      { status, finishedAt: kit.clock.ms, error: status === "failed" ? "boom" : "" },
      event,
    ),
  ).toBe(true);
  return thread;
}

const outbox = () => createCallbackOutbox(kit.database.db);

describe("callback delivery", () => {
  it("posts the final thread once, signed so a Standard Webhooks verifier accepts it", async () => {
    const thread = await endedThread("completed");
    startDeliverer();
    await kit.signals.callbacksDue();
    await until(async () => (await outbox().ofThread(thread.id))[0]?.status === "delivered");

    expect(posted).toHaveLength(1);
    const [delivery] = posted;
    expect(delivery!.url).toBe("https://hooks.example.com/thread");
    expect(delivery!.headers["content-type"]).toBe("application/json");
    const key = formatSigningKey((await keys.get(orgId)).current);
    const payload = new Webhook(key).verify(delivery!.body, delivery!.headers) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(payload.type).toBe("thread.completed");
    expect(payload.data).toMatchObject({ threadId: thread.id, status: "THREAD_STATUS_COMPLETED", scriptName: "demo" });
    expect(delivery!.headers["webhook-id"]).toBe((await outbox().ofThread(thread.id))[0]!.id);
  });

  it("queues nothing for a thread without a callback URL", async () => {
    const thread = await endedThread("completed", "");
    expect(await outbox().ofThread(thread.id)).toEqual([]);
  });

  it("retries with backoff, sending the same id and body, until a 2xx", async () => {
    answers = [500, new Error("connect ECONNREFUSED")];
    const thread = await endedThread("failed");
    startDeliverer();
    await kit.signals.callbacksDue();
    await until(() => posted.length === 1);
    await until(async () => (await outbox().ofThread(thread.id))[0]?.lastStatusCode === 500);
    let [row] = await outbox().ofThread(thread.id);
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "the receiver answered 500" });
    expect(row!.nextAttemptAt).toBe(kit.clock.ms + RETRY_DELAYS_MS[0]);

    // Not due yet: passes that look for work before the retry time send nothing more.
    await clockReadsFromNow(3);
    expect(posted).toHaveLength(1);
    kit.clock.ms += RETRY_DELAYS_MS[0];
    await until(() => posted.length === 2);
    await until(
      async () =>
        (await outbox().ofThread(thread.id))[0]?.attempts === 2 &&
        (await outbox().ofThread(thread.id))[0]?.leaseExpiresAt === 0,
    );
    [row] = await outbox().ofThread(thread.id);
    expect(row).toMatchObject({ status: "pending", lastError: "connect ECONNREFUSED" });
    expect(row!.nextAttemptAt).toBe(kit.clock.ms + RETRY_DELAYS_MS[1]);

    kit.clock.ms += RETRY_DELAYS_MS[1];
    await until(async () => (await outbox().ofThread(thread.id))[0]?.status === "delivered");
    expect(posted).toHaveLength(3);
    expect(new Set(posted.map((p) => p.headers["webhook-id"])).size).toBe(1);
    expect(new Set(posted.map((p) => p.body)).size).toBe(1);
    expect(JSON.parse(posted[0]!.body)).toMatchObject({ type: "thread.failed", data: { error: "boom" } });
  });

  it("stops at once on 410 Gone, and after the last scheduled retry", async () => {
    answers = [410];
    const gone = await endedThread("completed");
    startDeliverer();
    await kit.signals.callbacksDue();
    await until(async () => (await outbox().ofThread(gone.id))[0]?.status === "failed");
    expect(posted).toHaveLength(1);

    answers = Array.from({ length: RETRY_DELAYS_MS.length + 1 }, () => 503);
    const failing = await endedThread("completed");
    await kit.signals.callbacksDue();
    for (const delay of RETRY_DELAYS_MS) {
      const before = posted.length;
      await until(() => posted.length === before + 1);
      await until(async () => (await outbox().ofThread(failing.id))[0]?.leaseExpiresAt === 0);
      kit.clock.ms += delay * 1.2;
    }
    await until(async () => (await outbox().ofThread(failing.id))[0]?.status === "failed");
    expect((await outbox().ofThread(failing.id))[0]).toMatchObject({
      attempts: RETRY_DELAYS_MS.length + 1,
      lastStatusCode: 503,
    });
  });

  it("queues the callback when the API cancels a thread no worker holds", async () => {
    const thread = await insertThread(kit, orgId, { callbackUrl: "https://hooks.example.com/x" });
    startDeliverer();
    await call(
      ScriptService.method.cancelThread,
      kit.methods.cancelThread,
      { threadId: thread.id, reason: "no longer needed" },
      contextFor(orgId),
    );
    await until(async () => (await outbox().ofThread(thread.id))[0]?.status === "delivered");
    expect(JSON.parse(posted[0]!.body)).toMatchObject({
      type: "thread.cancelled",
      data: { threadId: thread.id, status: "THREAD_STATUS_CANCELLED" },
    });
  });

  it("drops a delivery whose thread was resumed before it went out", async () => {
    const thread = await endedThread("failed");
    await kit.store.updateIfStatus(orgId, thread.id, ["failed"], { status: "pending" });
    startDeliverer();
    await kit.signals.callbacksDue();
    await until(async () => (await outbox().ofThread(thread.id))[0]?.status === "failed");
    expect(posted).toEqual([]);
    expect((await outbox().ofThread(thread.id))[0]!.lastError).toMatch(/superseded/);
  });
});

describe("callback signing keys", () => {
  it("signs with both keys for a day after a rotation, then with the new one only", async () => {
    const first = await keys.get(orgId);
    expect(await keys.get(orgId)).toEqual(first);
    const rotated = await keys.rotate(orgId);
    expect(rotated.current).not.toEqual(first.current);
    expect(rotated.previous).toEqual(first.current);
    expect(rotated.previousExpiresAt).toBe(kit.clock.ms + 24 * 3600_000);

    await endedThread("completed");
    startDeliverer();
    await kit.signals.callbacksDue();
    await until(() => posted.length === 1);
    const [delivery] = posted;
    expect(delivery!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const key of [first.current, rotated.current])
      expect(() => new Webhook(formatSigningKey(key)).verify(delivery!.body, delivery!.headers)).not.toThrow();

    kit.clock.ms += 24 * 3600_000 + 1;
    expect((await keys.get(orgId)).previous).toBeUndefined();
  });

  it("keeps each organization's key to itself", async () => {
    const other = await kit.database.createOrganization();
    expect((await keys.get(orgId)).current).not.toEqual((await keys.get(other)).current);
  });
});
