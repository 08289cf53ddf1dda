import type { ServerObject } from "openapi3-ts/oas31";
import type { Listener } from "../options.js";

/**
 * The OpenAPI server of each listener. The URL is the specification's address placeholder
 * (`{api_url}`, `{data_api_url}`), a variable whose default is the listener's address on a
 * server started with its defaults; behind a proxy it is the public URL in front of it. The
 * variable is explained in the server's description, since the OpenAPI 3.1 schema that validators
 * ship misspells a server variable's `description`, and rejects it.
 */
const listenerServers: Record<Listener, ServerObject> = {
  api: {
    url: "{api_url}",
    description:
      "The api listener (`--api-port`, 8080 by default): script, compute, secrets, builds, vector databases, IAM. " +
      "`api_url` is its base URL, `http://<--host>:<--api-port>`, or the public URL in front of it.",
    variables: { api_url: { default: "http://127.0.0.1:8080" } },
  },
  data: {
    url: "{data_api_url}",
    description:
      "The data listener (`--data-port`, 8081 by default): actions, pipelines, ingest, sources, vector engine and search. " +
      "`data_api_url` is its base URL, `http://<--host>:<--data-port>`, or the public URL in front of it.",
    variables: { data_api_url: { default: "http://127.0.0.1:8081" } },
  },
};

/** Listeners in the order documents list them. */
const listenerOrder: readonly Listener[] = ["api", "data"];

export function listenerServer(listener: Listener): ServerObject {
  return listenerServers[listener];
}

/** The servers of a document whose routes are served by these listeners, in a stable order. */
export function documentServers(listeners: ReadonlySet<Listener>): ServerObject[] {
  return listenerOrder.filter((l) => listeners.has(l)).map(listenerServer);
}
