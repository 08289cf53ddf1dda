import type { DescMethod } from "@bufbuild/protobuf";
import type { ContextValues, HandlerContext } from "@connectrpc/connect";

/** What a call's context is built from. */
export interface CallContextInit {
  readonly method: DescMethod;
  readonly requestMethod: string;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly values: ContextValues;
  /** Aborted when the server shuts down: the call's signal follows it. */
  readonly shutdownSignal: AbortSignal | undefined;
}

/** A call's context, and what its owner does to it. */
export interface CallContext {
  readonly context: HandlerContext;
  /** Aborts the call's signal with `reason`, unless an earlier reason did (the client went away). */
  abort(reason: unknown): void;
  /** The call has ended: its signal is aborted with `reason` and stops following the shutdown signal. */
  end(reason: unknown): void;
}

/** The HTTP routes take no deadline (no `grpc-timeout` or `connect-timeout-ms` here). */
const noTimeout = () => undefined;

/**
 * The context of one call on the HTTP routes, built here rather than by connect's
 * createHandlerContext, which links a deadline controller and a second controller to every signal
 * and copies the request headers.
 *
 * Its signal is aborted when the shutdown signal is, when the client goes away, and when the call
 * ends, with the reason of whichever came first. It is made only when something reads it: most
 * unary calls never do, and an AbortSignal is the dearest part of a context in Node 20 (building
 * it, following the shutdown signal and aborting it at the end cost about 10 µs a call, against
 * about 200 µs for a whole cached GetEnvVar; bench/RESULTS.md). Until then what happens to the
 * call is remembered, so that a signal made late starts aborted with the same reason as one made
 * at once would have; the shutdown signal needs no remembering, it tells when it was aborted by
 * being so. Once made, the signal holds one listener on the shutdown signal until the call ends.
 *
 * The signal is an own, enumerable getter: a context spread into a new object (connect's own
 * invokers do) reads it, and so carries a real signal.
 */
export function openCallContext(init: CallContextInit): CallContext {
  const { shutdownSignal } = init;
  let controller: AbortController | undefined;
  /** The first reason the call was aborted with before its signal was made. */
  let early: { reason: unknown } | undefined;
  let ended = false;
  const onShutdown = () => abort(shutdownSignal!.reason);

  function signal(): AbortSignal {
    if (controller) return controller.signal;
    controller = new AbortController();
    if (early) controller.abort(early.reason);
    else if (shutdownSignal?.aborted) controller.abort(shutdownSignal.reason);
    else shutdownSignal?.addEventListener("abort", onShutdown);
    return controller.signal;
  }

  function abort(reason: unknown): void {
    if (controller) {
      if (!controller.signal.aborted) controller.abort(reason);
      return;
    }
    // A shutdown that came first would have aborted a signal made at once with its own reason.
    early ??= { reason: shutdownSignal?.aborted ? shutdownSignal.reason : reason };
  }

  const context: HandlerContext = {
    service: init.method.parent,
    method: init.method,
    protocolName: "http",
    requestMethod: init.requestMethod,
    url: init.url,
    get signal() {
      return signal();
    },
    timeoutMs: noTimeout,
    requestHeader: init.requestHeader,
    responseHeader: new Headers(),
    responseTrailer: new Headers(),
    values: init.values,
  };
  return {
    context,
    abort,
    end(reason) {
      if (ended) return;
      ended = true;
      if (controller) shutdownSignal?.removeEventListener("abort", onShutdown);
      abort(reason);
    },
  };
}
