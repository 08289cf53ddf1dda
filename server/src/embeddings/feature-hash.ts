/**
 * MurmurHash3 (x86, 32-bit) of a string's UTF-16 code units. It is small, fast, well mixed and
 * stable across platforms and releases, which is what feature hashing needs: the same feature
 * must land in the same slot forever, or stored vectors stop matching new queries.
 */
export function murmur3(text: string, seed: number): number {
  let h = seed >>> 0;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const length = text.length;
  let i = 0;
  // Two UTF-16 code units make one 32-bit block.
  for (; i + 1 < length; i += 2) {
    let k = (text.charCodeAt(i) & 0xffff) | ((text.charCodeAt(i + 1) & 0xffff) << 16);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  if (i < length) {
    let k = text.charCodeAt(i) & 0xffff;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= length * 2;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
