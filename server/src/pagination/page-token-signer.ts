import { createHmac, timingSafeEqual } from "node:crypto";
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { InvalidRequestError, type RestMiddleware } from "@platform/codegen/runtime/server";

/**
 * Page tokens are tamper-evident: every token a list answers is signed at the edge with a key
 * derived from the server secret, and a token that comes back is verified there before any
 * handler reads it. A forged or edited token is INVALID_ARGUMENT naming the field, never a
 * database error, and a token of one list is refused by another. The handlers keep writing their
 * own keyset tokens (the last sort key served); they never see a signature.
 *
 * The convention is AIP-158's: an RPC's `page_token` request field and its `next_page_token`
 * response field (at the top or in a top-level message such as `pagination`), and the REST
 * planes' `cursor` query parameter and `nextCursor` response member.
 */
export interface PageTokenSigner {
  /** For the RPC planes (every protocol and the HTTP routes). */
  readonly interceptor: Interceptor;
  /** For the REST planes' keyset lists. */
  readonly middleware: RestMiddleware;
  /** `inner` as handed to a client of the list `scope`. */
  sign(scope: string, inner: string): string;
  /** The handler's own token inside `token`, or undefined when this server did not sign it for `scope`. */
  verify(scope: string, token: string): string | undefined;
}

/** The purpose the signing key is derived for from the server secret (`box.deriveKey`). */
export const PAGE_TOKEN_KEY_PURPOSE = "platform page tokens v1";

/** Bytes of HMAC-SHA256 kept: 128 bits, as a forgery needs a 2^-128 guess. */
const MAC_BYTES = 16;

export function createPageTokenSigner(key: Uint8Array): PageTokenSigner {
  const mac = (scope: string, inner: string) =>
    createHmac("sha256", key).update(`${scope}\n${inner}`).digest().subarray(0, MAC_BYTES);
  const sign = (scope: string, inner: string) => `${inner}.${mac(scope, inner).toString("base64url")}`;
  const verify = (scope: string, token: string) => {
    const dot = token.lastIndexOf(".");
    if (dot === -1) return undefined;
    const inner = token.slice(0, dot);
    // Compared as text, not decoded: base64 has spare bits in its last character, so two texts
    // decode to the same bytes, and an edited token must not verify.
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(mac(scope, inner).toString("base64url"));
    return given.byteLength === expected.byteLength && timingSafeEqual(given, expected) ? inner : undefined;
  };
  return { interceptor: createInterceptor(sign, verify), middleware: createMiddleware(sign, verify), sign, verify };
}

type Sign = PageTokenSigner["sign"];
type Verify = PageTokenSigner["verify"];

function createInterceptor(sign: Sign, verify: Verify): Interceptor {
  const paths = new WeakMap<DescMessage, TokenPaths>();
  const pathsOf = (input: DescMessage, output: DescMessage): TokenPaths => {
    let found = paths.get(input);
    if (!found)
      paths.set(input, (found = { request: tokenField(input, "page_token"), response: responseTokenPath(output) }));
    return found;
  };
  return (next) => async (request) => {
    const scope = `/${request.service.typeName}/${request.method.name}`;
    const { request: field, response: path } = pathsOf(request.method.input, request.method.output);
    if (field && !request.stream) {
      const token = (request.message as Record<string, unknown>)[field.localName];
      if (typeof token === "string" && token !== "") {
        const inner = verify(scope, token);
        if (inner === undefined)
          throw new ConnectError(
            `${field.name}: is not a token from a previous ${request.method.name} response`,
            Code.InvalidArgument,
          );
        request = { ...request, message: { ...request.message, [field.localName]: inner } };
      }
    }
    const response = await next(request);
    if (path && !response.stream)
      signInPlace(response.message as Record<string, unknown>, path, (inner) => sign(scope, inner));
    return response;
  };
}

interface TokenPaths {
  readonly request: DescField | undefined;
  /** Local names from the response message to its `next_page_token`. */
  readonly response: readonly string[] | undefined;
}

function tokenField(message: DescMessage, name: string): DescField | undefined {
  const field = message.fields.find((f) => f.name === name);
  return field?.fieldKind === "scalar" && field.scalar === ScalarType.STRING && !field.oneof ? field : undefined;
}

function responseTokenPath(output: DescMessage): readonly string[] | undefined {
  const top = tokenField(output, "next_page_token");
  if (top) return [top.localName];
  for (const field of output.fields) {
    if (field.fieldKind !== "message" || field.oneof) continue;
    const nested = tokenField(field.message, "next_page_token");
    if (nested) return [field.localName, nested.localName];
  }
  return undefined;
}

function signInPlace(message: Record<string, unknown>, path: readonly string[], sign: (inner: string) => string): void {
  let holder: Record<string, unknown> | undefined = message;
  for (const name of path.slice(0, -1)) holder = holder?.[name] as Record<string, unknown> | undefined;
  const last = path.at(-1)!;
  const inner = holder?.[last];
  if (holder && typeof inner === "string" && inner !== "") holder[last] = sign(inner);
}

function createMiddleware(sign: Sign, verify: Verify): RestMiddleware {
  return (next) => async (call) => {
    const scope = call.operation.operationId;
    const cursor = "invalid" in call.input ? undefined : call.input.query.cursor;
    if (typeof cursor === "string" && cursor !== "") {
      const inner = verify(scope, cursor);
      if (inner === undefined)
        throw new InvalidRequestError("query.cursor", `is not a cursor from a previous ${scope} page`);
      call = { ...call, input: { ...call.input, query: { ...call.input.query, cursor: inner } } };
    }
    const result = await next(call);
    const body = result.body as { nextCursor?: unknown } | undefined;
    if (typeof body?.nextCursor === "string" && body.nextCursor !== "")
      return { ...result, body: { ...body, nextCursor: sign(scope, body.nextCursor) } };
    return result;
  };
}
