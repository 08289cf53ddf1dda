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
 * it, following the shutdown signal and aborting it at the end cost several µs a call;
 * bench/RESULTS.md). Until then what happens to the call is remembered, so that a signal made late
 * starts aborted with the same reason as one made at once would have; the shutdown signal needs no
 * remembering, it tells when it was aborted by being so. Once made, the signal holds one listener
 * on the shutdown signal (this object) until the call ends.
 *
 * The signal is an own, enumerable getter of the context: a context spread into a new object
 * (connect's own invokers do) reads it, and so carries a real signal. Nothing here is a closure
 * made per call: the server runs through a loader that names every such function as it is made,
 * at a cost of its own on every call.
 */
export class CallContext {
  readonly context: HandlerContext;
  readonly #shutdownSignal: AbortSignal | undefined;
  #controller: AbortController | undefined;
  /** The first reason the call was aborted with before its signal was made. */
  #early: { reason: unknown } | undefined;
  #ended = false;

  constructor(init: CallContextInit) {
    this.#shutdownSignal = init.shutdownSignal;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context's getter reads the call
    const call = this;
    this.context = {
      service: init.method.parent,
      method: init.method,
      protocolName: "http",
      requestMethod: init.requestMethod,
      url: init.url,
      get signal() {
        return call.#signal();
      },
      timeoutMs: noTimeout,
      requestHeader: init.requestHeader,
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      values: init.values,
    };
  }

  /** Aborts the call's signal with `reason`, unless an earlier reason did. */
  abort(reason: unknown): void {
    const controller = this.#controller;
    if (controller) {
      if (!controller.signal.aborted) controller.abort(reason);
      return;
    }
    // A shutdown that came first would have aborted a signal made at once with its own reason.
    const shutdownSignal = this.#shutdownSignal;
    this.#early ??= { reason: shutdownSignal?.aborted ? shutdownSignal.reason : reason };
  }

  /** The call has ended: its signal is aborted with `reason` and stops following the shutdown signal. */
  end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#controller) this.#shutdownSignal?.removeEventListener("abort", this);
    this.abort(reason);
  }

  /** The shutdown signal's listener. */
  handleEvent(): void {
    this.abort(this.#shutdownSignal!.reason);
  }

  #signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const shutdownSignal = this.#shutdownSignal;
    if (this.#early) controller.abort(this.#early.reason);
    else if (shutdownSignal?.aborted) controller.abort(shutdownSignal.reason);
    else shutdownSignal?.addEventListener("abort", this);
    return controller.signal;
  }
}
