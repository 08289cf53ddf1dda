import { ConnectError } from "@connectrpc/connect";

/** The ConnectError a call fails with; fails the test when the call succeeds. */
export async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected a failure");
}
