import { hash, parseOptions, verify, type Algorithm, type Options } from "@node-rs/argon2";

/**
 * Password hashing with argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane), stored
 * as PHC strings (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`) so the parameters travel with
 * each hash and can be raised later without breaking the hashes already stored.
 */
export const PASSWORD_HASH_OPTIONS = {
  algorithm: 2 as Algorithm.Argon2id,
  memoryCost: 19 * 1024,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
} as const satisfies Options;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

// A hash of a random password nobody knows, made once: what an unknown user's attempt is checked
// against, so it costs one argon2 verification like a known user's.
let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` matches the stored hash. Without a stored hash (no such user, or a user who
 * never set a password) the password is still checked against a dummy hash with the same
 * parameters, so the answer takes the same time and does not reveal whether the account exists.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummyHash ??= hash(crypto.randomUUID(), PASSWORD_HASH_OPTIONS);
    await verify(await dummyHash, password);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    // A stored value that is not a PHC string matches nothing; it is a data error, not a sign-in error.
    return false;
  }
}

/** Whether a stored hash was made with other parameters than today's: rehash it at the next sign-in. */
export function needsRehash(stored: string): boolean {
  try {
    const options = parseOptions(stored);
    return (
      options.algorithm !== PASSWORD_HASH_OPTIONS.algorithm ||
      options.memoryCost !== PASSWORD_HASH_OPTIONS.memoryCost ||
      options.timeCost !== PASSWORD_HASH_OPTIONS.timeCost ||
      options.parallelism !== PASSWORD_HASH_OPTIONS.parallelism ||
      options.outputLen !== PASSWORD_HASH_OPTIONS.outputLen
    );
  } catch {
    return true;
  }
}
