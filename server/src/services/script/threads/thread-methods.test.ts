import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptService,
  type CreateThreadRequest,
  type ListThreadsRequestSchema,
} from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { failure } from "../../../../test/connect-failure.js";
import { openThreadEnv } from "../env-sealing.js";
import { createEnvStore } from "../env-store.js";
import {
  call,
  contextFor,
  insertThread,
  openThreadTestKit,
  publishScript,
  START_MS,
  type ThreadTestKit,
} from "./thread-test-kit.js";

const SOURCE = `dsl: script/1
inputs:
  type: object
  required: [ticket_id]
  properties:
    ticket_id: {type: string}
    priority: {type: string, default: normal}
steps:
  - id: note
    set: {values: {seen: "\${inputs.ticket_id}"}}
  - id: route
    decide:
      branches:
        - {name: urgent, when: "\${inputs.priority == 'high'}", steps: [{id: page, yield: {value: paged}}]}
        - {name: other, default: true}
  - id: finish
    yield: {value: done}
`;

const SECOND_VERSION = `dsl: script/1
steps:
  - id: only
    yield: {value: 2}
`;

let kit: ThreadTestKit;
let orgId: string;
let otherOrg: string;
let runnable = 0;
beforeAll(async () => {
  kit = await openThreadTestKit();
  orgId = await kit.database.createOrganization();
  otherOrg = await kit.database.createOrganization();
  kit.signals.onRunnable(() => runnable++);
  await publishScript(kit.database, orgId, "triage", SOURCE);
  await publishScript(kit.database, orgId, "versions", SOURCE);
  await publishScript(kit.database, orgId, "versions", SECOND_VERSION);
});
afterAll(() => kit.close());

/** CreateThread fields a test sets over the defaults. */
type CreateInit = Omit<Partial<CreateThreadRequest>, "$typeName" | "$unknown">;
const methods = ScriptService.method;

function createThread(init: CreateInit, org = orgId) {
  return call(
    methods.createThread,
    kit.methods.createThread,
    { scriptName: "triage", inputJson: '{"ticket_id":"T-1"}', ...init },
    contextFor(org),
  );
}

const getThread = (threadId: string, org = orgId) =>
  call(methods.getThread, kit.methods.getThread, { threadId }, contextFor(org));

describe("CreateThread", () => {
  it("creates a PENDING thread of the active version, its input checked and completed, and wakes the workers", async () => {
    kit.clock.ms = START_MS;
    const before = runnable;
    const created = await createThread({
      metadata: { team: "support" },
      timeout: "5m",
      callbackUrl: "https://hooks.example.com/t",
    });
    expect(created).toMatchObject({ status: ThreadStatus.PENDING, createdAtMs: BigInt(START_MS) });
    expect(runnable).toBe(before + 1);
    const row = await kit.store.get(orgId, created.threadId);
    expect(row).toMatchObject({
      status: "pending",
      scriptName: "triage",
      scriptVersion: 1,
      totalSteps: 3,
      input: { ticket_id: "T-1", priority: "normal" },
      env: {},
      metadata: { team: "support" },
      timeoutMs: 300_000,
      deadlineAt: START_MS + 300_000,
      callbackUrl: "https://hooks.example.com/t",
    });
  });

  it("has no deadline without a timeout (the server default here is none) and reads empty input as {}", async () => {
    const created = await call(
      methods.createThread,
      kit.methods.createThread,
      { scriptName: "versions" },
      contextFor(orgId),
    );
    expect(await kit.store.get(orgId, created.threadId)).toMatchObject({
      scriptVersion: 2,
      totalSteps: 1,
      input: {},
      timeoutMs: 0,
      deadlineAt: 0,
    });
  });

  it("pins an explicit version", async () => {
    const created = await createThread({ scriptName: "versions", version: 1 });
    expect(await kit.store.get(orgId, created.threadId)).toMatchObject({ scriptVersion: 1, totalSteps: 3 });
  });

  it("loads the environment with load_env: the overlay merged over the tenant variables", async () => {
    const env = createEnvStore(kit.database.db, kit.box);
    await env.importEnvVars(orgId, { REGION: "eu", TOKEN: "tenant", KEEP: "t" });
    await env.updateScriptEnv(orgId, "triage", { set: { TOKEN: "script", KEEP: "", EXTRA: "x" }, delete: [] });
    const created = await createThread({ loadEnv: true });
    const row = (await kit.store.get(orgId, created.threadId))!;
    // Sealed in the row, bound to the thread; nothing in clear.
    expect(row.env).toEqual({});
    expect(openThreadEnv(kit.box, { orgId, threadId: created.threadId }, row.sealedEnv)).toEqual({
      EXTRA: "x",
      KEEP: "t",
      REGION: "eu",
      TOKEN: "script",
    });
  });

  it.each<[string, CreateInit, RegExp]>([
    ["a missing script name", { scriptName: "" }, /^script_name is required/],
    ["a negative version", { version: -1 }, /^version must be 0/],
    ["input that is not JSON", { inputJson: "{nope" }, /^input_json: is not valid JSON/],
    ["input that is not an object", { inputJson: "[1]" }, /^input_json: must be a JSON object/],
    ["input against the contract", { inputJson: '{"priority": 3}' }, /input_json/],
    ["an unparsable timeout", { timeout: "soon" }, /^timeout: "soon"/],
    ["a zero timeout", { timeout: "0s" }, /^timeout: "0s" must be longer than 0/],
    ["too much metadata", { metadata: { ["k".repeat(41)]: "v" } }, /^metadata\[/],
    ["a callback URL that is not http", { callbackUrl: "ftp://example.com/x" }, /^callback_url: the scheme/],
    [
      "a callback URL to a private address",
      { callbackUrl: "http://10.0.0.8/hook" },
      /^callback_url: "10.0.0.8" is a private address/,
    ],
  ])("refuses %s with INVALID_ARGUMENT naming the field", async (_name, init, message) => {
    const error = await failure(createThread(init));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(message);
  });

  it("names the contract's field that is wrong", async () => {
    const error = await failure(createThread({ inputJson: "{}" }));
    expect(error.rawMessage).toMatch(/^input_json.*ticket_id/);
  });

  it("answers NOT_FOUND for an unknown script or version, and for another organization's script", async () => {
    const unknown = await failure(createThread({ scriptName: "nothing" }));
    expect([unknown.code, unknown.rawMessage]).toEqual([Code.NotFound, 'script "nothing" not found']);
    const version = await failure(createThread({ version: 9 }));
    expect([version.code, version.rawMessage]).toEqual([Code.NotFound, 'script "triage" has no version 9']);
    const elsewhere = await failure(createThread({}, otherOrg));
    expect(elsewhere.code).toBe(Code.NotFound);
  });
});

describe("GetThread", () => {
  it("returns the thread with its organization's name, and NOT_FOUND elsewhere", async () => {
    const created = await createThread({ metadata: { a: "1" } });
    const thread = await getThread(created.threadId);
    expect(thread).toMatchObject({
      threadId: created.threadId,
      scriptName: "triage",
      scriptVersion: 1,
      status: ThreadStatus.PENDING,
      totalSteps: 3,
      metadata: { a: "1" },
      organizationName: `name-of-${orgId.slice(0, 8)}`,
    });
    expect((await failure(getThread(created.threadId, otherOrg))).code).toBe(Code.NotFound);
    expect((await failure(getThread("x"))).code).toBe(Code.InvalidArgument);
  });
});

describe("ListThreads", () => {
  let listOrg: string;
  const ids: string[] = [];
  beforeAll(async () => {
    listOrg = await kit.database.createOrganization();
    // Seven threads; two share a creation time, so the id breaks the tie.
    for (const [index, at] of [100, 200, 300, 300, 400, 500, 600].entries()) {
      kit.clock.ms = START_MS + at;
      const row = await insertThread(kit, listOrg, {
        scriptName: index % 2 === 0 ? "even" : "odd",
        status: index === 3 ? "failed" : "pending",
      });
      ids.push(row.id);
    }
  });

  const list = (init: MessageInitShape<typeof ListThreadsRequestSchema>, org = listOrg) =>
    call(methods.listThreads, kit.methods.listThreads, init, contextFor(org));

  it("pages through every thread newest first, without repeats", async () => {
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = await list({ pageSize: 2, pageToken: token });
      expect(page.threads.length).toBeLessThanOrEqual(2);
      seen.push(...page.threads.map((thread) => thread.threadId));
      token = page.nextPageToken;
      pages++;
    } while (token !== "");
    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(7);
    expect(new Set(seen)).toEqual(new Set(ids));
    const all = (await list({})).threads;
    expect(all.map((thread) => thread.threadId)).toEqual(seen);
    const created = all.map((thread) => Number(thread.createdAtMs));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it("filters by status and by script", async () => {
    expect((await list({ statusFilter: ThreadStatus.FAILED })).threads.map((t) => t.threadId)).toEqual([ids[3]]);
    const odd = await list({ scriptNameFilter: "odd" });
    expect(odd.threads.map((t) => t.threadId).sort()).toEqual([ids[1], ids[3], ids[5]].sort());
    const page = await list({ scriptNameFilter: "even", pageSize: 1 });
    const rest = await list({ scriptNameFilter: "even", pageSize: 10, pageToken: page.nextPageToken });
    expect(rest.threads.map((t) => t.threadId)).not.toContain(page.threads[0]?.threadId);
    expect(rest.threads.length + 1).toBe(4);
    expect(rest.nextPageToken).toBe("");
  });

  it("refuses a token under other filters, a foreign token and a negative page size", async () => {
    const page = await list({ pageSize: 1 });
    expect(
      (await failure(list({ pageToken: page.nextPageToken, statusFilter: ThreadStatus.PENDING }))).rawMessage,
    ).toMatch(/^page_token was issued for other filters/);
    expect((await failure(list({ pageToken: "bm90LWEtdG9rZW4" }))).code).toBe(Code.InvalidArgument);
    expect((await failure(list({ pageSize: -1 }))).rawMessage).toMatch(/^page_size/);
    expect((await failure(list({ statusFilter: 42 as ThreadStatus }))).rawMessage).toMatch(/^status_filter/);
  });

  it("shows only the caller's organization", async () => {
    expect((await list({}, otherOrg)).threads).toEqual([]);
  });
});
