import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import type { TemplateCatalog } from "./template-catalog.js";

/**
 * ListTemplates and GetTemplate over a catalog loaded at start-up (loadTemplateCatalog). Both are
 * public methods (`method_auth public` in the contract): the auth interceptor lets them through
 * without a token, so there is no principal and they never ask for one. Templates belong to no
 * organization; the catalog is the same for every caller.
 */
export function createTemplateMethods(
  catalog: TemplateCatalog,
): Pick<ScriptServiceImplementation, "listTemplates" | "getTemplate"> {
  return {
    listTemplates(request) {
      return catalog.listTemplates({
        tags: request.tags,
        labels: request.labels,
        category: request.category,
        search: request.search,
        pageSize: request.pageSize,
        pageToken: request.pageToken,
      });
    },

    getTemplate(request) {
      return catalog.getTemplate(request.id);
    },
  };
}
