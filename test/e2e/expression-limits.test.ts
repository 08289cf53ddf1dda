import { request } from "undici";
import { beforeAll, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// A thread whose expressions would hold the event loop for minutes unbounded (three nested
// comprehensions over 300 numbers: 27 million iterations, 14 s each time) runs on the shared
// server: while it evaluates them round after round, the health probe keeps answering within
// 100 ms at the 99th percentile, and the thread fails with an error naming the step, the field
// and the limit. The machine's own noise (other processes on its cores) is measured first, in the
// same run, and allowed on top: an unbounded evaluation stalls every request for seconds.
const HEAVY = "inputs.l.all(a, inputs.l.all(b, inputs.l.all(c, a + b + c >= 0)))";
const ROUNDS = 20;
const script = `dsl: script/1
inputs: {type: object, properties: {l: {type: array}, rounds: {type: array}}}
steps:
  - id: rounds
    iterate:
      over: inputs.rounds
      as: round
      maxConcurrency: 4
      steps:
        - {id: attempt, continueOnError: true, set: {values: {all: "\${${HEAVY}}"}}}
  - id: check
    set: {values: {all: "\${${HEAVY}}"}}
`;

let acme: TestOrganization;

beforeAll(async () => {
  acme = await createOrganization("bounds");
  await acme.client.script.createScript({ name: "heavy", source: script });
});

/** Latencies of GET /v1/script/health from `loops` sequential clients, until `done` settles. */
async function sampleHealth(done: Promise<unknown>, loops: number): Promise<number[]> {
  const latencies: number[] = [];
  let finished = false;
  void done.finally(() => (finished = true));
  const loop = async () => {
    while (!finished) {
      const started = performance.now();
      const response = await request(`${apiUrl()}/v1/script/health`);
      await response.body.text();
      latencies.push(performance.now() - started);
      expect(response.statusCode).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  return latencies;
}

function percentile(latencies: number[], fraction: number): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

const TERMINAL = new Set([ThreadStatus.COMPLETED, ThreadStatus.FAILED, ThreadStatus.CANCELLED]);

/** Polls the thread until it ends or `deadline` passes (a watch stream would add reads of its own to every step). */
async function ended(threadId: string, deadline: number): Promise<void> {
  while (Date.now() < deadline && !TERMINAL.has((await acme.client.script.getThread({ threadId })).status)) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

it("keeps the server answering while a thread evaluates costly expressions, and fails the thread naming the step, the field and the limit", async () => {
  // A first thread with nothing to evaluate: the worker parses and caches the script outside the measurement.
  const warmUp = await acme.client.script.createThread({
    scriptName: "heavy",
    inputJson: JSON.stringify({ l: [], rounds: [] }),
  });
  await ended(warmUp.threadId, Date.now() + 30_000);
  const idle = percentile(await sampleHealth(new Promise((resolve) => setTimeout(resolve, 3_000)), 4), 0.99);

  const { threadId } = await acme.client.script.createThread({
    scriptName: "heavy",
    inputJson: JSON.stringify({
      l: Array.from({ length: 300 }, (_, i) => i),
      rounds: Array.from({ length: ROUNDS }, (_, i) => i),
    }),
  });
  // Until the thread ends, or a deadline that the unbounded evaluation would pass.
  const latencies = await sampleHealth(ended(threadId, Date.now() + 45_000), 4);

  const p99 = percentile(latencies, 0.99);
  console.info(
    `health while the thread ran: ${latencies.length} requests, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${percentile(latencies, 1).toFixed(1)} ms; idle p99 ${idle.toFixed(1)} ms`,
  );
  expect(latencies.length).toBeGreaterThan(200);
  expect(p99).toBeLessThan(100 + idle);

  const thread = await acme.client.script.getThread({ threadId });
  expect(thread.status).toBe(ThreadStatus.FAILED);
  // The cost limit stops it; on a machine so loaded that 100,000 units take over 30 ms, the time limit does.
  const limit = /it (exceeded the cost limit of 100000 units|ran longer than the time limit of 30 ms)$/;
  expect(thread.error).toMatch(
    new RegExp(
      `^step "check" at /steps/1/set/values/all: expression "${HEAVY.replace(/[().+]/g, "\\$&")}" failed: ${limit.source}`,
    ),
  );
  const result = await acme.client.script.getThreadResult({ threadId });
  const attempts = result.steps.filter((step) => step.name === "attempt");
  expect(attempts).toHaveLength(ROUNDS);
  for (const attempt of attempts) {
    const detail = await acme.client.script.getThreadResult({ threadId, stepPath: attempt.stepPath });
    expect(detail.stepDetails[0]?.error).toMatch(limit);
  }
}, 120_000);
