import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityAdminImplementation } from "../../../../../gen/openapi/identity-admin/handler.js";
import type { Connection } from "../../../../../gen/openapi/identity-admin/types.js";
import { connectionActive, type ConnectionRecord } from "../connection-store.js";
import { adminPool, type AdminDeps } from "./admin-pool-access.js";
import { readAdminDocument } from "./admin-document.js";
import { isoTime } from "./pool-view.js";

type ConnectionOperations = Pick<
  IdentityAdminImplementation,
  "listConnections" | "upsertConnection" | "deleteConnection"
>;

/** A pool's sign-in connections, one per kind; `local` is the kind that signs anyone in. */
export function createConnectionHandlers(deps: AdminDeps): ConnectionOperations {
  const { connections } = deps.services;
  return {
    async listConnections({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      return { status: 200, body: { connections: (await connections.list(pool.ref)).map(connectionView) } };
    },

    async upsertConnection({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const config = readAdminDocument("configJson", body.configJson);
      return {
        status: 200,
        body: connectionView(await connections.upsert(pool.ref, { kind: body.kind, config, enabled: body.enabled })),
      };
    },

    async deleteConnection({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      if (!(await connections.delete(pool.ref, path.kind)))
        throw new ConnectError(`connection "${path.kind}" not found`, Code.NotFound);
      return { status: 200, body: {} };
    },
  };
}

function connectionView(record: ConnectionRecord): Connection {
  return {
    kind: record.kind,
    configJson: JSON.stringify(record.config),
    enabled: record.enabled,
    active: connectionActive(record),
    createdAt: isoTime(record.createdAt),
    updatedAt: isoTime(record.updatedAt),
  };
}
