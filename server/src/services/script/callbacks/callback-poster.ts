import { request, type Dispatcher } from "undici";
import type { CallbackPoster } from "./callback-deliverer.js";

/** Bytes of a receiver's answer read before the connection is dropped: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Posts callbacks with undici's `request`, which follows no redirect (a receiver cannot bounce a
 * delivery to another host), through `dispatcher`: the server passes the private-network guard,
 * which checks the address each connection really goes to (the URL was checked when the thread
 * was created, but a name can resolve elsewhere by the time the thread ends).
 */
export function createCallbackPoster(dispatcher: Dispatcher): CallbackPoster {
  return async (url, headers, body, signal) => {
    const response = await request(url, { method: "POST", headers, body, signal, dispatcher });
    await response.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => {});
    return { status: response.statusCode };
  };
}
