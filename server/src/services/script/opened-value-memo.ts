/**
 * The values a secret box has opened, by what opened them: the associated data and the sealed
 * bytes, most recently used last. Opening costs tens of microseconds of CPU (a fresh AES-GCM
 * context per value), which a busy GetEnvVar would pay on every call for the same few values.
 *
 * An entry is never stale: a write seals the new value afresh, with a new nonce, so new bytes miss
 * the memo; bytes that open under one slot's associated data are looked up under that slot's only,
 * so a value copied to another slot still has to open there, and does not. The memo holds only
 * values this process has opened, beside the key that opens them all, so it adds nothing to what
 * the process's memory would reveal.
 */
export class OpenedValueMemo {
  private readonly entries = new Map<string, string>();

  constructor(
    private readonly maxEntries = 1024,
    /** Larger values are opened every time: keeping them would cost more memory than it saves CPU. */
    private readonly maxSealedBytes = 4096,
  ) {}

  /** The value `sealed` opens to under `associatedData`, from the memo or from `open`. */
  open(sealed: Uint8Array, associatedData: string, open: () => string): string {
    if (sealed.byteLength > this.maxSealedBytes) return open();
    const id = `${associatedData}\n${Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).toString("base64")}`;
    const known = this.entries.get(id);
    if (known !== undefined) {
      this.entries.delete(id);
      this.entries.set(id, known);
      return known;
    }
    const value = open();
    this.entries.set(id, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
