/** What changed about one object, told to listeners after the change committed. */
export interface ObjectChange {
  readonly orgId: string;
  readonly bucket: string;
  readonly key: string;
  readonly kind: "put" | "delete";
  /** The new version's etag (unquoted) for a put; the removed version's for a delete. */
  readonly etag: string;
  readonly size: number;
  readonly contentType: string;
}

/** A bucket that was just created (not one `ensureBucket` found existing). */
export interface BucketCreated {
  readonly orgId: string;
  readonly bucket: string;
  readonly bucketId: string;
}

/**
 * Listeners of one event, called in registration order after the change committed. A listener's
 * failure is reported and does not undo the change nor stop the other listeners: the change is
 * already durable, and a reaction (an ingest rule) must recover on its own.
 */
export class Listeners<E> {
  private readonly listeners = new Set<(event: E) => void | Promise<void>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  add(listener: (event: E) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async emit(event: E): Promise<void> {
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
