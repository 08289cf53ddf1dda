/** A background loop started by {@link startPollLoop}. */
export interface PollLoop {
  /** Runs a pass as soon as the current one ends; a wake-up that arrives during a pass is kept. */
  wake(): void;
  /** Stops after the pass in progress. */
  stop(): Promise<void>;
}

export interface PollLoopOptions {
  /** The safety-net poll: how long to wait for a wake-up before looking again. */
  readonly pollMs: number;
  /** Gets what a pass threw; the loop goes on. */
  readonly onError: (error: unknown) => void;
}

/**
 * The one loop of the server's background workers (thread claims, callback deliveries, user-store
 * migrations, e-mail): runs `pass` now and again after `pollMs`, at once when the pass says more
 * work is waiting (returns true) or when woken. Workers wake it from LISTEN/NOTIFY or in-process
 * signals; the poll covers a signal that never came.
 */
export function startPollLoop(pass: () => Promise<boolean | void>, options: PollLoopOptions): PollLoop {
  let stopped = false;
  let woken = false;
  let interrupt: (() => void) | undefined;

  async function run(): Promise<void> {
    while (!stopped) {
      woken = false;
      let more = false;
      try {
        more = (await pass()) === true;
      } catch (error) {
        options.onError(error);
      }
      if (more || woken || stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        interrupt = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      interrupt = undefined;
    }
  }

  const done = run();
  return {
    wake() {
      woken = true;
      interrupt?.();
    },
    async stop() {
      stopped = true;
      interrupt?.();
      await done;
    },
  };
}
