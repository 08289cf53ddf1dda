import type { ThreadMethodsContext } from "./thread-access.js";
import { eventKind, TERMINAL_EVENT_KINDS } from "./thread-messages.js";
import { TERMINAL, type EventRow } from "./thread-store.js";

/**
 * The events of one thread as a watch stream reads them: everything recorded so far, then each
 * new batch as it is written. It subscribes to the thread's signal when created, before its
 * first read, so that no event written between the replay and the live part is missed. A
 * signal only says "read again"; the poll timer covers a lost one (a NOTIFY during a reconnect).
 */
export class EventFeed {
  private last = 0;
  private lastKind = "";
  private signalled = false;
  private waking: (() => void) | undefined;
  private readonly unsubscribe: () => void;
  private readonly onAbort = () => this.notify();

  constructor(
    private readonly context: ThreadMethodsContext,
    private readonly orgId: string,
    private readonly threadId: string,
    private readonly signal: AbortSignal,
  ) {
    this.unsubscribe = context.signals.onEvents(threadId, () => this.notify());
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** The events written since the last read (all of them on the first), in sequence order. */
  async read(): Promise<EventRow[]> {
    // Cleared before reading: a signal that arrives during the read makes the next wait return at once.
    this.signalled = false;
    const rows = await this.context.store.eventsAfter(this.orgId, this.threadId, this.last);
    const newest = rows.at(-1);
    if (newest) {
      this.last = newest.sequence;
      this.lastKind = eventKind(newest);
    }
    return rows;
  }

  /** Resolves on the next signal, after the poll interval, or when the client goes away. */
  async wait(): Promise<void> {
    if (this.signalled || this.signal.aborted) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.notify(), this.context.watchPollMs);
      this.waking = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Whether the thread has ended for good: the newest event read is terminal, nothing was written
   * after it, and the thread's status is terminal. A `failed` event followed by a resume is not
   * the end; neither is a terminal event whose status update has not landed yet (the next wake-up
   * asks again). A thread that no longer exists has ended too.
   */
  async ended(): Promise<boolean> {
    if (!TERMINAL_EVENT_KINDS.has(this.lastKind)) return false;
    const thread = await this.context.store.getHeader(this.orgId, this.threadId);
    if (!thread) return true;
    if (!TERMINAL.has(thread.status)) return false;
    if ((await this.context.store.eventsAfter(this.orgId, this.threadId, this.last)).length === 0) return true;
    this.signalled = true;
    return false;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  close(): void {
    this.unsubscribe();
    this.signal.removeEventListener("abort", this.onAbort);
    this.notify();
  }

  private notify(): void {
    this.signalled = true;
    const waking = this.waking;
    this.waking = undefined;
    waking?.();
  }
}
