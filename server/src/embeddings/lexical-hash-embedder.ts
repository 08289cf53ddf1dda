import { ConnectError, Code } from "@connectrpc/connect";
import type { EmbedKind, Embedder } from "./embedder.js";
import { murmur3 } from "./feature-hash.js";
import { textTokens } from "./text-tokens.js";

/** Model id of the local embedder; a collection records it so its vectors are only compared with their own kind. */
export const LEXICAL_HASH_MODEL_ID = "platform-lexical-hash-v1";

/**
 * Relative weights of the three feature groups. Whole words carry the meaning a lexical model can
 * see; word pairs reward phrases in the same order; character 3- and 4-grams let inflections and
 * compounds (ship / shipping / shipment) share part of their weight. Changing any number here, the
 * seeds or the tokeniser changes every vector: that is a new model id, never an edit of v1.
 */
const UNIGRAM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.7;
const CHAR_GRAM_WEIGHT = 0.3;
const CHAR_GRAM_SIZES = [3, 4] as const;
const SEED = 0x5eed_0001;
/** The feature of a text with no words, so that it still has a unit vector (cosine is undefined for zero). */
const EMPTY_FEATURE = "\u0000empty";

/**
 * The local embedder used when the operator configured no endpoint for a model: deterministic
 * feature hashing (the "hashing trick") of word unigrams, word bigrams and character n-grams, with
 * sublinear term frequency (1 + ln tf), a signed hash so that collisions cancel out on average
 * instead of piling up, and L2 normalisation so that cosine similarity is a dot product.
 *
 * It is LEXICAL, not semantic: texts are close when they share words and word pieces, not when
 * they mean the same thing in other words ("car" and "automobile" are unrelated to it). It needs no
 * network and no weights, gives the same vector for the same text on every machine, and works at
 * any length; longer vectors collide less. Queries and documents are embedded alike.
 */
/** Characters embedded between two turns of the event loop: a few milliseconds of work. */
const CHARACTERS_PER_SLICE = 20_000;

export class LexicalHashEmbedder implements Embedder {
  readonly modelId = LEXICAL_HASH_MODEL_ID;

  constructor(readonly dimensions: number) {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16_000)
      throw new ConnectError(`dimensions must be an integer from 1 to 16000, got ${dimensions}`, Code.InvalidArgument);
  }

  /**
   * Embeds on the event loop, giving it back between texts once a slice of work is done, so that
   * a large batch of one tenant does not hold every other call of the process up.
   */
  async embed(texts: readonly string[], _kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    let sinceYield = 0;
    for (const text of texts) {
      vectors.push(this.embedOne(text));
      sinceYield += text.length;
      if (sinceYield >= CHARACTERS_PER_SLICE) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
        signal?.throwIfAborted();
      }
    }
    return vectors;
  }

  /** The vector of one text; synchronous, for callers that embed in a tight loop. */
  embedOne(text: string): Float32Array {
    const features = lexicalFeatures(text);
    const sums = new Float64Array(this.dimensions);
    for (const [feature, { count, weight }] of features) {
      const hash = murmur3(feature, SEED);
      // The low bits pick the slot, the top bit the sign: murmur3 mixes them independently.
      const slot = hash % this.dimensions;
      const sign = hash >>> 31 === 1 ? -1 : 1;
      sums[slot] = (sums[slot] ?? 0) + sign * weight * (1 + Math.log(count));
    }
    let norm = 0;
    for (const value of sums) norm += value * value;
    norm = Math.sqrt(norm);
    const vector = new Float32Array(this.dimensions);
    if (norm === 0) {
      // Every feature cancelled out (possible at tiny dimensions): fall back to the empty text's vector.
      vector[murmur3(EMPTY_FEATURE, SEED) % this.dimensions] = 1;
      return vector;
    }
    for (let i = 0; i < sums.length; i++) vector[i] = (sums[i] ?? 0) / norm;
    return vector;
  }
}

interface Feature {
  count: number;
  weight: number;
}

/** Every feature of a text with its count and group weight; the prefixes keep the groups' hash spaces apart. */
function lexicalFeatures(text: string): Map<string, Feature> {
  const features = new Map<string, Feature>();
  const add = (key: string, weight: number) => {
    const feature = features.get(key);
    if (feature) feature.count++;
    else features.set(key, { count: 1, weight });
  };
  const tokens = textTokens(text);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    add(`w:${token}`, UNIGRAM_WEIGHT);
    if (i + 1 < tokens.length) add(`b:${token} ${tokens[i + 1] as string}`, BIGRAM_WEIGHT);
    // Word boundaries are part of the grams, so a prefix or a suffix counts as such.
    const padded = `<${token}>`;
    for (const size of CHAR_GRAM_SIZES) {
      for (let start = 0; start + size <= padded.length; start++)
        add(`c:${padded.slice(start, start + size)}`, CHAR_GRAM_WEIGHT);
    }
  }
  if (features.size === 0) add(EMPTY_FEATURE, 1);
  return features;
}
