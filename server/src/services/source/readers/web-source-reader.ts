import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { JsonObject } from "@bufbuild/protobuf";
import type { Dispatcher } from "undici";
import { privateNetworkErrorOf } from "../../../net/private-network.js";
import { SourceReadError, type SourceObject, type SourceReader } from "./source-reader.js";

export interface WebReaderOptions {
  /** The outbound guard (or a plain agent when private networks are allowed). */
  readonly dispatcher: Dispatcher;
  readonly requestTimeoutMs?: number;
}

/**
 * Reads a list of HTTP(S) URLs; each URL is an object key. Every request, redirects included,
 * goes through the outbound guard, which checks the address each connection really goes to.
 */
export function createWebSourceReader(config: JsonObject, options: WebReaderOptions): SourceReader {
  const urls = (config.urls as string[] | undefined) ?? [];
  const timeoutMs = options.requestTimeoutMs ?? 60_000;

  const send = async (url: string, method: "GET" | "HEAD", signal: AbortSignal | undefined) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    // Node's fetch takes undici's `dispatcher`, which the DOM RequestInit type does not declare.
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method,
      redirect: "follow",
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      dispatcher: options.dispatcher,
    };
    try {
      return await fetch(url, init);
    } catch (error) {
      const refused = privateNetworkErrorOf(error);
      if (refused) throw new SourceReadError("refused", refused.message, { cause: error });
      throw new SourceReadError(
        "unavailable",
        timeout.aborted ? "the server did not answer in time" : "the server could not be reached",
        {
          cause: error,
        },
      );
    }
  };

  return {
    async *discover(signal) {
      for (const url of urls) {
        // HEAD gives what changes detection needs without the body; a server that refuses HEAD
        // (405, 501) or fails it still lists the URL, and read() reports what is wrong with it.
        let response: Response | undefined;
        try {
          response = await send(url, "HEAD", signal);
        } catch (error) {
          if (signal?.aborted || (error instanceof SourceReadError && error.kind === "refused")) throw error;
        }
        yield objectOf(url, response?.ok ? response : undefined);
      }
    },

    async read(key, signal) {
      if (!urls.includes(key)) throw new SourceReadError("not_found", "the URL is not one of the source's");
      const response = await send(key, "GET", signal);
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new SourceReadError(
          response.status === 404 || response.status === 410 ? "not_found" : "unavailable",
          `the server answered HTTP ${response.status}`,
        );
      }
      const { size, contentType, etag } = objectOf(key, response);
      return { body: Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), size, contentType, etag };
    },
  };
}

function objectOf(url: string, response: Response | undefined): SourceObject {
  const header = (name: string) => response?.headers.get(name) ?? "";
  const length = Number(header("content-length") || Number.NaN);
  const lastModified = Date.parse(header("last-modified"));
  return {
    key: url,
    size: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
    etag: header("etag") || header("last-modified"),
    version: "",
    contentType: header("content-type"),
    lastModified: Number.isNaN(lastModified) ? undefined : lastModified,
  };
}
