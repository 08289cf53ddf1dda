import { getEventListeners } from "node:events";
import { createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import { CallContext } from "./call-context.js";

// A call's signal is made when something reads it; made late, it must say what one made at once
// would say: aborted or not, and with the reason of whatever happened first.

const ended = new Error("ended");
const gone = new Error("gone");
const stopping = new Error("stopping");

function open(shutdown = new AbortController()) {
  const call = new CallContext({
    method: ScriptService.method.getThread,
    requestMethod: "GET",
    url: "/v1/script/threads/t",
    requestHeader: new Headers(),
    values: createContextValues(),
    shutdownSignal: shutdown.signal,
  });
  return { call, shutdown, listeners: () => getEventListeners(shutdown.signal, "abort").length };
}

describe("the call context's signal", () => {
  it("is made when read: then it follows the shutdown signal until the call ends", () => {
    const { call, listeners } = open();
    expect(listeners()).toBe(0);
    const { signal } = call.context;
    expect(signal.aborted).toBe(false);
    expect(call.context.signal).toBe(signal);
    expect(listeners()).toBe(1);
    call.end(ended);
    expect(listeners()).toBe(0);
    expect([signal.aborted, signal.reason]).toEqual([true, ended]);
  });

  it("follows a shutdown once made, and keeps the first reason", () => {
    const { call, shutdown, listeners } = open();
    const { signal } = call.context;
    shutdown.abort(stopping);
    expect(signal.reason).toBe(stopping);
    call.abort(gone);
    call.end(ended);
    expect([signal.reason, listeners()]).toEqual([stopping, 0]);
  });

  it("made after the client went away, starts aborted with that reason and takes no listener", () => {
    const { call, shutdown, listeners } = open();
    call.abort(gone);
    shutdown.abort(stopping);
    expect([call.context.signal.aborted, call.context.signal.reason, listeners()]).toEqual([true, gone, 0]);
  });

  it("made after a shutdown, starts aborted with its reason, even once the client went away too", () => {
    const { call, shutdown } = open();
    shutdown.abort(stopping);
    call.abort(gone);
    expect(call.context.signal.reason).toBe(stopping);
  });

  it("made after the call ended, starts aborted with the end's reason", () => {
    const { call, listeners } = open();
    call.end(ended);
    expect([call.context.signal.reason, listeners()]).toEqual([ended, 0]);
  });

  it("is carried by a spread of the context", () => {
    const { call } = open();
    const copy = { ...call.context };
    expect(copy.signal).toBe(call.context.signal);
    expect(copy.timeoutMs()).toBeUndefined();
  });
});
