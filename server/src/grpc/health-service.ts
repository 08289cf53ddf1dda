import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  type Health,
} from "../../../gen/grpc/health/v1/health_pb.js";

/** Whether the server takes traffic: the server sets it, every Health call reads it. */
export interface HealthState {
  readonly serving: boolean;
  /** SERVING once ready; NOT_SERVING from the start of shutdown on. Watchers hear each change. */
  setServing(serving: boolean): void;
  /** Calls `listener` on each change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export function createHealthState(): HealthState {
  let serving = false;
  const listeners = new Set<() => void>();
  return {
    get serving() {
      return serving;
    },
    setServing(value) {
      if (value === serving) return;
      serving = value;
      for (const listener of listeners) listener();
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The gRPC health protocol. "" is the whole server; every served service answers by its
 * fully-qualified name with the server's status (they share one process, one database and one
 * shutdown). Check answers NOT_FOUND for another name; Watch streams SERVICE_UNKNOWN for it, as the
 * protocol asks, and stays open.
 */
export function createHealthService(
  state: HealthState,
  served: () => readonly DescService[],
): ServiceImpl<typeof Health> {
  let names: Set<string> | undefined;
  const statusOf = (service: string): ServingStatus | undefined => {
    names ??= new Set(["", ...served().map((s) => s.typeName)]);
    if (!names.has(service)) return undefined;
    return state.serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  return {
    check(request) {
      const status = statusOf(request.service);
      if (status === undefined)
        throw new ConnectError(`service "${request.service.slice(0, 200)}" is not served here`, Code.NotFound);
      return { status };
    },
    async *watch(request, context: HandlerContext) {
      // A change that arrives while the last answer is being written is kept in `changed`.
      let changed = false;
      let wake: (() => void) | undefined;
      const signal = () => {
        changed = true;
        wake?.();
      };
      const unsubscribe = state.onChange(signal);
      context.signal.addEventListener("abort", signal, { once: true });
      try {
        let sent: ServingStatus | undefined;
        while (!context.signal.aborted) {
          const status = statusOf(request.service) ?? ServingStatus.SERVICE_UNKNOWN;
          if (status !== sent) {
            sent = status;
            yield { status };
          }
          if (!changed) await new Promise<void>((resolve) => (wake = resolve));
          changed = false;
          wake = undefined;
        }
      } finally {
        unsubscribe();
        context.signal.removeEventListener("abort", signal);
      }
    },
  };
}
