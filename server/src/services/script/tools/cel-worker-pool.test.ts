import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createCelWorkerPool } from "./cel-worker-pool.js";
import type { CelWorkerPool } from "./cel-worker-pool.js";
import { toolError } from "./test-kit.js";
import { ToolError } from "./tool-error.js";

const pools: CelWorkerPool[] = [];
afterAll(() => Promise.all(pools.map((pool) => pool.close())));

function pool(options: Parameters<typeof createCelWorkerPool>[0] = {}): CelWorkerPool {
  const created = createCelWorkerPool(options);
  pools.push(created);
  return created;
}

const never = new AbortController().signal;
/** About 2 s of CPU in one evaluation: 3,000 × 3,000 comparisons. */
const RUNAWAY = { expression: "data.all(x, data.all(y, y >= 0))", data: Array.from({ length: 3000 }, (_, i) => i) };

/** Counts the ticks of a 10 ms timer while `work` runs: the event loop's responsiveness. */
async function ticksDuring<T>(
  work: Promise<T>,
): Promise<{ ticks: number; elapsedMs: number; settled: PromiseSettledResult<T> }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  const [settled] = await Promise.allSettled([work]);
  clearInterval(timer);
  return { ticks, elapsedMs: performance.now() - started, settled: settled! };
}

describe("the json.transform worker pool", () => {
  it("evaluates in a worker and passes failures back as ToolErrors", async () => {
    const workers = pool({ size: 1 });
    expect(
      await workers.transform(
        { expression: "data.items.map(i, i * 2)", data: { items: [1, 2, 3] } },
        { signal: never, timeLimitMs: 5_000 },
      ),
    ).toEqual([2, 4, 6]);
    expect(
      (
        await toolError(
          workers.transform({ expression: "data.a +", data: {} }, { signal: never, timeLimitMs: 5_000 }),
          "invalid_input",
        )
      ).message,
    ).toMatch(/^json\.transform: expression does not parse/);
    expect(
      (
        await toolError(
          workers.transform({ expression: "data.b", data: {} }, { signal: never, timeLimitMs: 5_000 }),
          "failed",
        )
      ).message,
    ).toContain("b");
  });

  it("stops a runaway expression at its time limit while the event loop keeps running", async () => {
    const workers = pool({ size: 1 });
    await workers.transform({ expression: "1", data: null }, { signal: never, timeLimitMs: 5_000 }); // a started worker: the limit counts evaluation only
    const { ticks, elapsedMs, settled } = await ticksDuring(
      workers.transform(RUNAWAY, { signal: never, timeLimitMs: 300 }),
    );
    expect(settled.status).toBe("rejected");
    const error = (settled as PromiseRejectedResult).reason as ToolError;
    expect(error).toBeInstanceOf(ToolError);
    expect(error.reason).toBe("timeout");
    expect(error.message).toBe(
      "json.transform: the expression did not finish within the limit of 300ms and was stopped",
    );
    expect(elapsedMs).toBeGreaterThanOrEqual(290);
    expect(elapsedMs).toBeLessThan(1_500);
    expect(ticks).toBeGreaterThanOrEqual(15); // 30 if the loop were never blocked; 0 if the evaluation ran on it
    // The terminated worker was replaced: the pool answers the next call.
    expect(await workers.transform({ expression: "data + 1", data: 41 }, { signal: never, timeLimitMs: 5_000 })).toBe(
      42,
    );
  });

  it("terminates an evaluation when its signal aborts, with the signal's reason", async () => {
    const workers = pool({ size: 1 });
    const controller = new AbortController();
    // Nothing outside the worker thread marks the start of an evaluation, so the abort comes on a
    // timer; the runaway expression runs for seconds, so the abort lands while it runs.
    setTimeout(() => controller.abort(new ToolError("cancelled", "json.transform was cancelled")), 100);
    const started = performance.now();
    const error = await toolError(
      workers.transform(RUNAWAY, { signal: controller.signal, timeLimitMs: 10_000 }),
      "cancelled",
    );
    expect(error.message).toBe("json.transform was cancelled");
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(
      await workers.transform({ expression: "'still' + ' here'", data: null }, { signal: never, timeLimitMs: 5_000 }),
    ).toBe("still here");
  });

  it("takes a cancelled call out of the queue without touching the running one", async () => {
    const workers = pool({ size: 1 });
    const running = workers.transform(
      { ...RUNAWAY, data: RUNAWAY.data.slice(0, 1500) },
      { signal: never, timeLimitMs: 10_000 },
    );
    const controller = new AbortController();
    const queued = workers.transform(
      { expression: "1", data: null },
      { signal: controller.signal, timeLimitMs: 10_000 },
    );
    controller.abort();
    expect((await toolError(queued, "cancelled")).message).toBe("json.transform: the call was cancelled");
    expect(await running).toBe(true);
  });

  it("fails a call whose worker runs out of memory and replaces the worker", async () => {
    const workers = pool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 } });
    expect(workers.memoryMiB).toBe(32);
    const strings = Array.from({ length: 2000 }, (_, i) => `item-${i}`);
    const error = await toolError(
      workers.transform(
        { expression: "data.map(x, data.map(y, x + y)).size()", data: strings },
        { signal: never, timeLimitMs: 20_000 },
      ),
      "failed",
    );
    expect(error.message).toBe(
      "json.transform: the expression needed more than its memory limit of 32 MiB and was stopped",
    );
    expect(
      await workers.transform({ expression: "size(data)", data: strings }, { signal: never, timeLimitMs: 5_000 }),
    ).toBe(2000);
  });

  it("runs calls beyond its size in order as workers free up", async () => {
    const workers = pool({ size: 2 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        workers.transform({ expression: "data * data", data: i }, { signal: never, timeLimitMs: 5_000 }),
      ),
    );
    expect(results).toEqual([0, 1, 4, 9, 16, 25]);
  });

  it("refuses calls once closed", async () => {
    const workers = createCelWorkerPool({ size: 1 });
    expect(await workers.transform({ expression: "true", data: null }, { signal: never, timeLimitMs: 5_000 })).toBe(
      true,
    );
    await workers.close();
    expect(
      (
        await toolError(
          workers.transform({ expression: "true", data: null }, { signal: never, timeLimitMs: 5_000 }),
          "unavailable",
        )
      ).message,
    ).toBe("json.transform: the server is stopping");
  });

  it("starts its workers under the binary's loader too (tsx registered at run time, no vitest)", async () => {
    const poolUrl = new URL("./cel-worker-pool.ts", import.meta.url).href;
    // As bin/platform-server.js does: plain Node, tsx registered by the program. CommonJS --eval,
    // since a worker inherits the parent's execArgv and `--input-type` would break its entry.
    const program = [
      "(async () => {",
      '  const { register } = await import("tsx/esm/api");',
      "  register();",
      `  const { createCelWorkerPool } = await import(${JSON.stringify(poolUrl)});`,
      "  const pool = createCelWorkerPool({ size: 1 });",
      '  const result = await pool.transform({ expression: "data.map(x, x + 1)", data: [1, 2] }, { signal: new AbortController().signal, timeLimitMs: 5000 });',
      "  await pool.close();",
      "  console.log(JSON.stringify(result));",
      "})();",
    ].join("\n");
    const cwd = fileURLToPath(new URL("../../../../", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ["--eval", program], { cwd, timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual([2, 3]);
  });
});
