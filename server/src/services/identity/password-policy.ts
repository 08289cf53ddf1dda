import { Code, ConnectError } from "@connectrpc/connect";
import { MAX_PASSWORD_LENGTH } from "./pool-settings.js";

/**
 * A new password's rule: at least the pool's minimum length and at most 128 characters, counted
 * in Unicode code points as a person counts them. No composition rules (NIST SP 800-63B).
 */
export function checkPassword(password: string, minLength: number, field = "password"): string {
  const length = [...password].length;
  if (length < minLength)
    throw new ConnectError(`${field} must be at least ${minLength} characters`, Code.InvalidArgument);
  if (length > MAX_PASSWORD_LENGTH)
    throw new ConnectError(`${field} must be at most ${MAX_PASSWORD_LENGTH} characters`, Code.InvalidArgument);
  return password;
}
