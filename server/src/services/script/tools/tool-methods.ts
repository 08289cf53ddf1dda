import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import { toToolMessage } from "./tool-message.js";
import type { ToolRegistry } from "./tool-registry.js";

/** ListTools over the registry: the caller's organization sees the native set and its own tools. */
export function createToolMethods(registry: ToolRegistry): Pick<ScriptServiceImplementation, "listTools"> {
  return {
    async listTools(request, context) {
      const { tools, nextPageToken } = await registry.list(principalOf(context).orgId, {
        pageSize: request.pageSize,
        pageToken: request.pageToken,
      });
      return { tools: tools.map(toToolMessage), nextPageToken };
    },
  };
}
