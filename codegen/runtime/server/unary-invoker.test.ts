import { create, type DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GetThreadRequestSchema, ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../gen/platform/script/v1/script_service_server.js";
import { ThreadStatus } from "../../../gen/platform/script/v1/thread_pb.js";
import { CallContext } from "./call-context.js";
import { createUnaryInvoker } from "./unary-invoker.js";

// The interceptor chain of a unary method is built once; each call then goes through it as
// connect's own invoker would take it.

const seen = createContextKey<string>("");
/** What the implementation saw of its context on the last call. */
let last: { context: HandlerContext; tag: string | null } | undefined;

const implementation: Partial<ScriptServiceImplementation> = {
  getThread(request, context) {
    last = { context, tag: context.requestHeader.get("x-tag") };
    if (request.threadId === "boom") throw new ConnectError("no such thread", Code.NotFound);
    context.responseHeader.set("x-handler", "yes");
    // A partial answer: the invoker completes it into a full message.
    return { threadId: request.threadId, status: ThreadStatus.RUNNING };
  },
};
const spec = createServiceImplSpec(ScriptService as DescService, implementation as Partial<ServiceImpl<DescService>>)
  .methods.getThread!;
if (spec.kind !== "unary") throw new Error("getThread is unary");

function contextOf() {
  return new CallContext({
    method: ScriptService.method.getThread,
    requestMethod: "GET",
    url: "/v1/script/threads/t",
    requestHeader: new Headers({ "x-tag": "sent" }),
    values: createContextValues(),
    shutdownSignal: undefined,
  }).context;
}

const input = (threadId: string) => create(GetThreadRequestSchema, { threadId });

describe("the unary invoker", () => {
  it("builds the chain once, and runs every call through it, first interceptor outermost", async () => {
    let built = 0;
    const order: string[] = [];
    const named =
      (name: string): Interceptor =>
      (next) => {
        built++;
        return async (request) => {
          order.push(name);
          return next(request);
        };
      };
    const invoke = createUnaryInvoker(spec, [named("outer"), named("inner")]);
    for (let i = 0; i < 3; i++) await invoke(contextOf(), input(`t${i}`));
    expect(built).toBe(2);
    expect(order).toEqual(["outer", "inner", "outer", "inner", "outer", "inner"]);
  });

  it("hands the implementation its own context while the request is passed on as it came", async () => {
    const context = contextOf();
    const output = await createUnaryInvoker(spec, [(next) => (request) => next(request)])(context, input("t"));
    expect(last!.context).toBe(context);
    expect(output).toMatchObject({ threadId: "t", status: ThreadStatus.RUNNING });
    expect(Object.keys(output)).toContain("$typeName");
    expect(context.responseHeader.get("x-handler")).toBe("yes");
  });

  it("merges what an interceptor changed of the request into the implementation's context", async () => {
    const context = contextOf();
    const retag: Interceptor = (next) => (request) => {
      request.contextValues.set(seen, "by interceptor");
      return next({ ...request, header: new Headers({ "x-tag": "changed" }) });
    };
    await createUnaryInvoker(spec, [retag])(context, input("t"));
    expect(last!.context).not.toBe(context);
    expect(last!.tag).toBe("changed");
    expect(last!.context.values.get(seen)).toBe("by interceptor");
    expect(last!.context.signal).toBe(context.signal);
    expect(last!.context.responseHeader).toBe(context.responseHeader);
  });

  it("answers with the headers an interceptor answered with", async () => {
    const context = contextOf();
    const replace: Interceptor = (next) => async (request) => {
      const response = await next(request);
      return { ...response, header: new Headers({ "x-interceptor": "yes" }) };
    };
    await createUnaryInvoker(spec, [replace])(context, input("t"));
    expect([...context.responseHeader.keys()]).toEqual(["x-interceptor"]);
  });

  it("lets an error of the implementation through the interceptors", async () => {
    const caught: unknown[] = [];
    const watch: Interceptor = (next) => async (request) => {
      try {
        return await next(request);
      } catch (error) {
        caught.push(error);
        throw error;
      }
    };
    await expect(createUnaryInvoker(spec, [watch])(contextOf(), input("boom"))).rejects.toMatchObject({
      code: Code.NotFound,
    });
    expect(caught).toHaveLength(1);
  });
});
