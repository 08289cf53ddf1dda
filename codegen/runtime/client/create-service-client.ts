import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, Code, createClient, type CallOptions, type Transport } from "@connectrpc/connect";
import type { ClientMethodFacts } from "./client-method-facts.js";
import { defaultRetryPolicy, withRetries, type RetryPolicy } from "./retry-policy.js";

export interface ServiceClientOptions {
  /** Retry policy for idempotent methods, or `false` to never retry. */
  readonly retry?: Partial<RetryPolicy> | false;
}

type AnyCall = (request: unknown, options?: CallOptions) => unknown;

/**
 * Builds the client behind every generated `create<Service>Client`: connect's typed client, with
 * retries on methods the contract marks idempotent and an item iterator (`<method>All`) on
 * paginated lists. Driven only by the generated method facts.
 */
export function createServiceClient<Client>(
  service: DescService,
  facts: Readonly<Record<string, ClientMethodFacts>>,
  transport: Transport,
  options: ServiceClientOptions = {},
): Client {
  const base = createClient(service, transport) as unknown as Record<string, AnyCall>;
  const policy: RetryPolicy =
    options.retry === false ? { ...defaultRetryPolicy, maxRetries: 0 } : { ...defaultRetryPolicy, ...options.retry };
  const client: Record<string, AnyCall> = {};
  for (const method of service.methods) {
    const name = method.localName;
    const fact = facts[name];
    const call = base[name]!;
    const retryable =
      fact !== undefined && fact.kind === "unary" && fact.idempotency !== "unknown" && policy.maxRetries > 0;
    client[name] = retryable
      ? (request, callOptions) =>
          withRetries(() => call(request, callOptions) as Promise<unknown>, policy, callOptions?.signal)
      : call;
    const pagination = fact?.pagination;
    if (pagination) {
      const list = client[name]!;
      client[`${name}All`] = (request, callOptions) => iterateItems(list, request, callOptions, pagination);
    }
  }
  // The generated interface describes exactly the methods built above, from the same descriptor.
  return client as Client;
}

async function* iterateItems(
  list: AnyCall,
  request: unknown,
  options: CallOptions | undefined,
  pagination: NonNullable<ClientMethodFacts["pagination"]>,
): AsyncGenerator<unknown> {
  let pageToken = "";
  const seen = new Set<string>();
  for (;;) {
    const page = (await list({ ...(request as object), [pagination.pageToken]: pageToken }, options)) as Record<
      string,
      unknown
    >;
    yield* page[pagination.items] as unknown[];
    const next = page[pagination.nextPageToken];
    if (typeof next !== "string" || next === "") return;
    if (seen.has(next)) {
      throw new ConnectError(`the server returned page token "${next}" twice; stopping to avoid a loop`, Code.Internal);
    }
    seen.add(next);
    pageToken = next;
  }
}
