/**
 * Reads `source` to its end on its own, whoever consumes the result: a consumer that stops early
 * (a caller hanging up) leaves the source running to completion, its remaining items dropped.
 */
export function detached<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  const buffer: T[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let consumed = false;
  let wake: (() => void) | undefined;

  void (async () => {
    try {
      for await (const item of source) {
        if (!consumed) buffer.push(item);
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wake?.();
    }
  })();

  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          if (buffer.length > 0) {
            yield buffer.shift()!;
            continue;
          }
          if (done) {
            if (failure) throw failure.error;
            return;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        consumed = true;
        buffer.length = 0;
      }
    },
  };
}
