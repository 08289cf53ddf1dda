import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptService,
  type GetThreadResultRequestSchema,
} from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { StepStatus, ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { failure } from "../../../../test/connect-failure.js";
import {
  call,
  collect,
  contextFor,
  EngineDouble,
  insertThread,
  openThreadTestKit,
  START_MS,
  stream,
  type ThreadTestKit,
} from "./thread-test-kit.js";
import type { ThreadRow } from "./thread-store.js";

const MiB = 1024 * 1024;
const encoder = new TextEncoder();

let kit: ThreadTestKit;
let orgId: string;
let otherOrg: string;
/** Completed with a 5 MB output, after steps started out of path order. */
let big: ThreadRow;
const bigOutput = { text: "x".repeat(5 * MiB) };
const bigBytes = encoder.encode(JSON.stringify(bigOutput));

beforeAll(async () => {
  kit = await openThreadTestKit();
  orgId = await kit.database.createOrganization();
  otherOrg = await kit.database.createOrganization();
  kit.clock.ms = START_MS;
  const engine = new EngineDouble(kit, await insertThread(kit, orgId));
  await engine.start();
  for (const path of ["0", "1", "1.0.10", "1.0.2", "10", "2"]) {
    kit.clock.ms += 10;
    await engine.stepStarted(path, { name: `step ${path}`, input: { path } });
    await engine.stepCompleted(path, { done: path });
  }
  kit.clock.ms = START_MS + 1_000;
  await engine.complete(bigOutput, 6);
  big = engine.thread;
});
afterAll(() => kit.close());

const methods = ScriptService.method;
const result = (thread: ThreadRow, init: MessageInitShape<typeof GetThreadResultRequestSchema> = {}, org = orgId) =>
  call(methods.getThreadResult, kit.methods.getThreadResult, { threadId: thread.id, ...init }, contextFor(org));
const streamOutput = (thread: ThreadRow, maxChunkBytes = 0) =>
  collect(
    stream(
      methods.streamThreadResult,
      kit.methods.streamThreadResult,
      { threadId: thread.id, maxChunkBytes },
      contextFor(orgId),
    ),
  );
const streamSteps = (thread: ThreadRow, stepPath = "", maxChunkBytes = 0) =>
  collect(
    stream(
      methods.streamStepResult,
      kit.methods.streamStepResult,
      { threadId: thread.id, stepPath, maxChunkBytes },
      contextFor(orgId),
    ),
  );

function concat(parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return whole;
}

describe("GetThreadResult", () => {
  it("caps a 5 MB output at 4 MiB and reports its real size", async () => {
    const answer = await result(big);
    expect(answer).toMatchObject({
      threadId: big.id,
      status: ThreadStatus.COMPLETED,
      outputTotalBytes: BigInt(bigBytes.length),
      outputTruncated: true,
      durationMs: 1_000n,
      stepsExecuted: 6,
    });
    expect(answer.outputData.length).toBe(4 * MiB);
    expect(Buffer.from(answer.outputData).equals(Buffer.from(bigBytes.subarray(0, 4 * MiB)))).toBe(true);
  });

  it("lists the steps in path order, and one step's details with the steps under it", async () => {
    const answer = await result(big, { stepPath: "1" });
    expect(answer.steps.map((step) => step.stepPath)).toEqual(["0", "1", "1.0.2", "1.0.10", "2", "10"]);
    expect(answer.steps[2]).toMatchObject({ parentPath: "1", status: StepStatus.COMPLETED, durationMs: 0n });
    expect(answer.stepDetails.map((step) => step.stepPath)).toEqual(["1", "1.0.2", "1.0.10"]);
    expect(new TextDecoder().decode(answer.stepDetails[0]?.outputData)).toBe('{"done":"1"}');
    expect((await failure(result(big, { stepPath: "3" }))).code).toBe(Code.NotFound);
    expect((await failure(result(big, { stepPath: "x" }))).code).toBe(Code.InvalidArgument);
  });

  it("leaves the steps out with output_only, and everything but the metadata with metadata_only", async () => {
    const outputOnly = await result(big, { outputOnly: true });
    expect(outputOnly.steps).toEqual([]);
    expect(outputOnly.outputData.length).toBe(4 * MiB);
    const metadataOnly = await result(big, { metadataOnly: true, outputOnly: true, stepPath: "1" });
    expect(metadataOnly).toMatchObject({
      status: ThreadStatus.COMPLETED,
      outputTotalBytes: BigInt(bigBytes.length),
      outputTruncated: true,
      stepsExecuted: 6,
      steps: [],
      stepDetails: [],
      yieldedValues: [],
    });
    expect(metadataOnly.outputData.length).toBe(0);
  });

  it("returns what is recorded of an unfinished thread, without output", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    await engine.stepStarted("0", { name: "first" });
    kit.clock.ms += 250;
    const answer = await result(engine.thread);
    expect(answer).toMatchObject({
      status: ThreadStatus.RUNNING,
      outputTotalBytes: 0n,
      outputTruncated: false,
      stepsExecuted: 0,
      totalYielded: 0,
      yieldsTruncated: false,
    });
    expect(answer.steps).toMatchObject([{ stepPath: "0", status: StepStatus.RUNNING, durationMs: 250n }]);
  });

  it("returns the 100 most recent yielded values, in order, with the total", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    for (let index = 1; index <= 120; index++) await engine.yielded("0.0.0", { index });
    const answer = await result(engine.thread);
    expect(answer).toMatchObject({ totalYielded: 120, yieldsTruncated: true });
    expect(answer.yieldedValues.map((value) => Number(value.sequence))).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 21),
    );
    expect(JSON.parse(new TextDecoder().decode(answer.yieldedValues.at(-1)?.valueData))).toEqual({ index: 120 });
    // metadata_only returns the count but no values: by the contract's definition, they were left out.
    expect(await result(engine.thread, { metadataOnly: true })).toMatchObject({
      totalYielded: 120,
      yieldedValues: [],
      yieldsTruncated: true,
    });

    const few = new EngineDouble(kit, await insertThread(kit, orgId));
    await few.start();
    await few.yielded("0", "a");
    await few.yielded("0", "b");
    expect(await result(few.thread)).toMatchObject({
      totalYielded: 2,
      yieldsTruncated: false,
      yieldedValues: [{ sequence: 1n }, { sequence: 2n }],
    });
  });

  it("reports the output's warnings, in GetThread too, and none for a matching output", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    const warnings = ["output/total: must be number", "output/id: is required"];
    await engine.complete({ total: "12" }, 0, warnings);
    expect(await result(engine.thread)).toMatchObject({ status: ThreadStatus.COMPLETED, warnings });
    expect(await result(engine.thread, { metadataOnly: true })).toMatchObject({ warnings });
    const thread = await call(
      methods.getThread,
      kit.methods.getThread,
      { threadId: engine.thread.id },
      contextFor(orgId),
    );
    expect(thread).toMatchObject({ status: ThreadStatus.COMPLETED, warnings });
    expect((await result(big)).warnings).toEqual([]);
  });

  it("answers NOT_FOUND in another organization", async () => {
    expect((await failure(result(big, {}, otherOrg))).code).toBe(Code.NotFound);
  });
});

describe("StreamThreadResult", () => {
  it("streams the whole output byte for byte in 64 KB chunks", async () => {
    const messages = await streamOutput(big, 64 * 1024);
    const [meta, ...chunks] = messages;
    const expectedChunks = Math.ceil(bigBytes.length / (64 * 1024));
    expect(meta?.chunk).toMatchObject({
      case: "meta",
      value: { status: ThreadStatus.COMPLETED, totalBytes: BigInt(bigBytes.length), totalChunks: expectedChunks },
    });
    expect(chunks.length).toBe(expectedChunks);
    const data = chunks.map((message, index) => {
      if (message.chunk.case !== "output") throw new Error(`message ${index + 1} is not an output chunk`);
      expect(message.chunk.value).toMatchObject({
        chunkIndex: index,
        isFinal: index === expectedChunks - 1,
        totalBytes: BigInt(bigBytes.length),
      });
      expect(message.chunk.value.data.length).toBeLessThanOrEqual(64 * 1024);
      return message.chunk.value.data;
    });
    expect(Buffer.from(concat(data)).equals(Buffer.from(bigBytes))).toBe(true);
  });

  it("uses 2 MiB chunks by default and moves small sizes up to 64 KB", async () => {
    expect((await streamOutput(big)).length).toBe(1 + 3);
    expect((await streamOutput(big, 1)).length).toBe(1 + Math.ceil(bigBytes.length / (64 * 1024)));
    expect((await failure(streamOutput(big, -1))).code).toBe(Code.InvalidArgument);
  });

  it("sends only the status of an unfinished thread, and one empty chunk for an empty output", async () => {
    const running = new EngineDouble(kit, await insertThread(kit, orgId));
    await running.start();
    expect((await streamOutput(running.thread)).map((message) => message.chunk)).toEqual([
      {
        case: "meta",
        value: expect.objectContaining({ status: ThreadStatus.RUNNING, totalBytes: 0n, totalChunks: 0 }),
      },
    ]);

    const empty = new EngineDouble(kit, await insertThread(kit, orgId));
    await empty.start();
    await empty.complete(null);
    const messages = await streamOutput(empty.thread);
    expect(messages.map((message) => message.chunk.case)).toEqual(["meta", "output"]);
    expect(messages[1]?.chunk).toMatchObject({
      case: "output",
      value: { chunkIndex: 0, isFinal: true, totalBytes: 0n },
    });
  });
});

describe("StreamStepResult", () => {
  let thread: ThreadRow;
  const input = { blob: "i".repeat(100_000) };
  const output = { blob: "o".repeat(200_000) };
  beforeAll(async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    await engine.stepStarted("1", { name: "large", input });
    await engine.stepCompleted("1", output);
    await engine.stepStarted("0", { name: "small", input: { a: 1 } });
    thread = engine.thread;
  });

  it("sends the summaries, then each step in path order with data chunks for what did not fit", async () => {
    const messages = await streamSteps(thread, "", 64 * 1024);
    expect(messages[0]?.chunk).toMatchObject({
      case: "meta",
      value: {
        totalSteps: 2,
        steps: [
          { stepPath: "0", status: StepStatus.RUNNING },
          { stepPath: "1", status: StepStatus.COMPLETED },
        ],
      },
    });
    const kinds = messages
      .slice(1)
      .map((message) =>
        message.chunk.case === "data"
          ? `${message.chunk.value.field}#${message.chunk.value.chunkIndex}`
          : message.chunk.case,
      );
    expect(kinds).toEqual(["step", "step", "input#0", "input#1", "output#0", "output#1", "output#2", "output#3"]);

    const large = messages[2]?.chunk;
    if (large?.case !== "step") throw new Error("expected the step message of step 1");
    expect(large.value).toMatchObject({ stepPath: "1", inputTruncated: true, outputTruncated: true });
    expect(large.value.outputData.length).toBe(64 * 1024);
    expect(large.value.sampleOutput.length).toBe(4096);

    for (const [field, value] of [
      ["input", input],
      ["output", output],
    ] as const) {
      const pieces = messages.flatMap((message) =>
        message.chunk.case === "data" && message.chunk.value.field === field ? [message.chunk.value] : [],
      );
      expect(pieces.at(-1)?.isFinal).toBe(true);
      expect(pieces.filter((piece) => piece.isFinal).length).toBe(1);
      expect(new TextDecoder().decode(concat(pieces.map((piece) => piece.data)))).toBe(JSON.stringify(value));
    }
  });

  it("streams one step on request, and refuses an unknown one", async () => {
    const messages = await streamSteps(thread, "0");
    expect(messages.map((message) => message.chunk.case)).toEqual(["meta", "step"]);
    expect(messages[1]?.chunk).toMatchObject({
      case: "step",
      value: { stepPath: "0", name: "small", inputTruncated: false },
    });
    expect((await failure(streamSteps(thread, "4"))).code).toBe(Code.NotFound);
    expect((await failure(streamSteps(thread, "", -5))).code).toBe(Code.InvalidArgument);
  });
});
