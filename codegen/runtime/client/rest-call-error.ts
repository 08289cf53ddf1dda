import { ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus } from "../errors/code-from-http-status.js";
import { messageOfErrorBody } from "../rest/error-body.js";

/**
 * An error answer of a REST plane. It is a ConnectError, so SDK callers catch one type on every
 * plane and read `code`; `status` and `body` keep what the plane sent (an OAuth `error` code, say).
 * Its `name` stays "ConnectError": ConnectError's `instanceof` recognises errors by that name.
 */
export class RestCallError extends ConnectError {
  /** Only real RestCallErrors: the inherited check would accept any ConnectError. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  readonly operationId: string;
  readonly status: number;
  /** The parsed JSON body, the text of any other body, or undefined when there was none. */
  readonly body: unknown;

  constructor(operationId: string, status: number, body: unknown, headers: Headers) {
    super(messageOfErrorBody(body) ?? `HTTP ${status}`, codeFromHttpStatus(status), headers);
    this.operationId = operationId;
    this.status = status;
    this.body = body;
  }
}
