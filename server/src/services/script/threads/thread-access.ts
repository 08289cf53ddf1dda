import { Code, ConnectError } from "@connectrpc/connect";
import type { BlobUrlSigner } from "../../../blob/blob-url-signer.js";
import type { Database } from "../../../db/database.js";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { ArtifactStore } from "./artifact-store.js";
import { checkThreadId } from "./thread-requests.js";
import type { ThreadSignals } from "./thread-signals.js";
import type { ThreadHeader, ThreadStore } from "./thread-store.js";

/** What the thread methods share: the database, the engine's store and signals, the clock, settings. */
export interface ThreadMethodsDeps {
  readonly db: Database;
  readonly store: ThreadStore;
  readonly signals: ThreadSignals;
  /** The threads' files (ListArtifacts). */
  readonly artifacts: Pick<ArtifactStore, "list">;
  /** Makes the pre-signed download URLs ListArtifacts hands out. */
  readonly downloadLinks: Pick<BlobUrlSigner, "sign">;
  /** Opens the sealed environment values that load_env reads. */
  readonly box: SecretBox;
  /** The clock, in epoch milliseconds; tests pass their own. */
  readonly now?: () => number;
  /** The deadline of a thread created without `timeout` (the server's configured default), ms; 0 = none. */
  readonly defaultTimeoutMs?: number;
  /** Lets callback_url name loopback, private and link-local hosts (development servers, tests). */
  readonly allowPrivateCallbacks?: boolean;
  /** How often a watch stream re-reads events without a signal: the safety net for a missed one. */
  readonly watchPollMs?: number;
}

/** The deps with every default filled in. */
export interface ThreadMethodsContext {
  readonly db: Database;
  readonly store: ThreadStore;
  readonly signals: ThreadSignals;
  readonly artifacts: Pick<ArtifactStore, "list">;
  readonly downloadLinks: Pick<BlobUrlSigner, "sign">;
  readonly now: () => number;
  readonly defaultTimeoutMs: number;
  readonly allowPrivateCallbacks: boolean;
  readonly watchPollMs: number;
  /** The thread of the caller's organization, or NOT_FOUND (another organization's thread included). */
  requireThread(orgId: string, threadId: string): Promise<ThreadHeader>;
}

export function threadMethodsContext(deps: ThreadMethodsDeps): ThreadMethodsContext {
  return {
    db: deps.db,
    store: deps.store,
    signals: deps.signals,
    artifacts: deps.artifacts,
    downloadLinks: deps.downloadLinks,
    now: deps.now ?? Date.now,
    defaultTimeoutMs: deps.defaultTimeoutMs ?? 0,
    allowPrivateCallbacks: deps.allowPrivateCallbacks ?? false,
    watchPollMs: deps.watchPollMs ?? 1000,
    async requireThread(orgId, threadId) {
      checkThreadId(threadId);
      const row = await deps.store.getHeader(orgId, threadId);
      if (!row) throw threadNotFound(threadId);
      return row;
    },
  };
}

export function threadNotFound(threadId: string): ConnectError {
  return new ConnectError(`thread ${JSON.stringify(threadId)} not found`, Code.NotFound);
}

export function stepNotFound(threadId: string, stepPath: string): ConnectError {
  return new ConnectError(`thread ${JSON.stringify(threadId)} has no step ${JSON.stringify(stepPath)}`, Code.NotFound);
}
