/**
 * Reads exact byte counts from a stream of chunks of any size, holding no more than the chunk in
 * hand plus what the caller asked for: a layer flows through, only wanted bytes are kept.
 */
export class ByteReader {
  readonly #source: AsyncIterator<Uint8Array>;
  #chunk: Uint8Array = new Uint8Array(0);
  #offset = 0;
  #ended = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** The next `length` bytes, or fewer when the stream ends first (empty at its end). */
  async read(length: number): Promise<Buffer> {
    const parts: Uint8Array[] = [];
    let missing = length;
    while (missing > 0 && (await this.#fill())) {
      const take = Math.min(missing, this.#chunk.length - this.#offset);
      parts.push(this.#chunk.subarray(this.#offset, this.#offset + take));
      this.#offset += take;
      missing -= take;
    }
    return Buffer.concat(parts);
  }

  /** Passes over `length` bytes without keeping them; answers how many there were. */
  async skip(length: number): Promise<number> {
    let missing = length;
    while (missing > 0 && (await this.#fill())) {
      const take = Math.min(missing, this.#chunk.length - this.#offset);
      this.#offset += take;
      missing -= take;
    }
    return length - missing;
  }

  /** Ends the source early (a reader that stops before the end must release the stream). */
  async close(): Promise<void> {
    if (!this.#ended) await this.#source.return?.();
    this.#ended = true;
  }

  async #fill(): Promise<boolean> {
    while (this.#offset >= this.#chunk.length) {
      if (this.#ended) return false;
      const next = await this.#source.next();
      if (next.done) {
        this.#ended = true;
        return false;
      }
      this.#chunk = next.value;
      this.#offset = 0;
    }
    return true;
  }
}
