import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import { artifactKey } from "./artifact-store.js";
import type { ThreadMethodsContext } from "./thread-access.js";

type ArtifactMethods = Pick<ScriptServiceImplementation, "listArtifacts">;

/**
 * ListArtifacts: the files a thread's steps wrote, sorted by path, each with a download URL signed
 * at this call (so a client that lost an expired link lists again). Listing reads the rows only:
 * the bytes are fetched by the client, from the link, without its credentials.
 */
export function createArtifactMethods(context: ThreadMethodsContext): ArtifactMethods {
  return {
    async listArtifacts(request, handlerContext) {
      const { orgId } = principalOf(handlerContext);
      const thread = await context.requireThread(orgId, request.threadId);
      const rows = await context.artifacts.list(orgId, thread.id);
      return {
        artifacts: rows.map((row) => {
          const name = row.path.slice(row.path.lastIndexOf("/") + 1);
          return {
            name,
            path: row.path,
            contentType: row.contentType,
            sizeBytes: BigInt(row.sizeBytes),
            downloadUrl: context.downloadLinks.sign(artifactKey(thread.id, row.path), {
              contentType: row.contentType,
              fileName: name,
            }),
          };
        }),
      };
    },
  };
}
