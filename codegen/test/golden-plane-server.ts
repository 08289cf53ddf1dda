import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import type { RestMiddleware, RestPlaneHandlerOptions } from "../runtime/server/index.js";
import { createGoldenPlaneHandler, type GoldenPlaneImplementation } from "./golden/openapi/golden-plane/handler.js";
import type { Widget } from "./golden/openapi/golden-plane/types.js";

/** Who the auth middleware let in. */
export const callerKey = createContextKey<string | undefined>(undefined, { description: "caller" });

/** Needs `Bearer good` on every operation whose `auth` is not `none`, as the server's auth middleware would. */
export const requireToken: RestMiddleware = (next) => async (call) => {
  if (call.operation.auth !== "none") {
    if (call.context.requestHeader.get("authorization") !== "Bearer good") {
      throw new ConnectError("a valid bearer token is required", Code.Unauthenticated, {
        "www-authenticate": "Bearer",
      });
    }
    call.context.values.set(callerKey, "caller-1");
  }
  return next(call);
};

/**
 * An implementation of the golden plane that echoes what it receives, so tests can see what the
 * runtime parsed, converted and defaulted.
 */
export function goldenImplementation(): GoldenPlaneImplementation & { unavailableLeft: number } {
  const widgets = new Map<string, Widget>();
  return {
    unavailableLeft: 0,
    async listWidgets(input, context) {
      return {
        status: 200,
        body: {
          widgets: [...widgets.values()],
          next: JSON.stringify({ query: input.query, headers: input.headers, space: context.serverVariables.space }),
        },
      };
    },
    async createWidget(input) {
      if ([...widgets.values()].some((w) => w.name === input.body.name))
        return { status: 409, body: { error: "body.name: is taken" } };
      const widget: Widget = { ...input.body, id: `w-${widgets.size + 1}` };
      widgets.set(widget.id, widget);
      return { status: 201, body: widget, headers: { location: `/demo/widgets/${widget.id}` } };
    },
    async getWidget(input) {
      const id = input.path.widgetId;
      if (id === "w-500") throw new Error("connection to db-7 refused");
      if (id === "w-403") throw new ConnectError("not yours", Code.PermissionDenied);
      if (id === "w-5001") throw new ConnectError("relation widgets_v2 does not exist", Code.Internal);
      if (id.startsWith("w-4040")) throw new ConnectError(`widget ${id} does not exist`, Code.NotFound);
      if (id === "w-503") {
        if (this.unavailableLeft-- > 0) throw new ConnectError("migrating", Code.Unavailable, { "retry-after": "0" });
        return { status: 200, body: { id, name: "after retry", redirect_uris: [] }, headers: { "retry-after": 7 } };
      }
      const widget = widgets.get(id);
      return widget ? { status: 200, body: widget } : { status: 404, body: { error: `widget ${id} does not exist` } };
    },
    async deleteWidget(input) {
      return widgets.delete(input.path.widgetId) ? { status: 204 } : { status: 404, body: { error: "no such widget" } };
    },
    async exchangeToken(input) {
      if ("invalid" in input)
        return { status: 400, body: { error: "invalid_request", error_description: input.invalid.message } };
      if (input.body.grant_type === "refresh_token" && input.body.refresh_token === "busy") {
        throw new ConnectError("the user store is migrating", Code.Unavailable, { "retry-after": "5" });
      }
      return { status: 200, body: { access_token: `${input.body.grant_type}-token`, expires_in: 900 } };
    },
    async showLogin(input) {
      if (input.query.next === "home") return { status: 302, headers: { location: "/demo/home" } };
      return { status: 200, body: `<p>sign in to reach ${input.query.next}</p>` };
    },
    async submitLogin(input, context) {
      const page = context.requestHeader.get("content-type")?.startsWith("application/x-www-form-urlencoded");
      const text = `${input.body.email} remember=${String(input.body.remember)}`;
      return page
        ? { status: 200, contentType: "text/html", body: `<p>${text}</p>` }
        : { status: 200, contentType: "application/json", body: { error: text } };
    },
    async getMe(_input, context) {
      return { status: 200, body: { id: context.values.get(callerKey) ?? "nobody", roles: null } };
    },
  };
}

export interface RunningPlane {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves an implementation of the golden plane on a free port over node:http. */
export async function serveGoldenPlane(
  implementation: Partial<GoldenPlaneImplementation>,
  options: RestPlaneHandlerOptions = {},
  fallback?: Parameters<ReturnType<typeof createGoldenPlaneHandler>["nodeHandler"]>[0],
): Promise<RunningPlane> {
  const handler = createGoldenPlaneHandler(implementation, { middleware: [requireToken], ...options });
  const server: Server = createServer(handler.nodeHandler(fallback));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
