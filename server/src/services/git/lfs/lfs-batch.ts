/** The LFS batch API's media type, for requests and answers alike. */
export const LFS_MEDIA_TYPE = "application/vnd.git-lfs+json";

export const OID = /^[0-9a-f]{64}$/;

export interface LfsObjectRequest {
  readonly oid: string;
  readonly size: number;
}

export interface LfsBatchRequest {
  readonly operation: "upload" | "download";
  readonly objects: readonly LfsObjectRequest[];
}

/** An LFS error body (`message`, optional `documentation_url`); the status goes on the response. */
export class LfsError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** How many objects one batch may name: git-lfs sends 100 at a time by default. */
export const MAX_BATCH_OBJECTS = 1000;

/**
 * Checks a batch request body and answers it typed, or throws a 422 naming the field. Only the basic
 * transfer adapter and sha256 are served; a client that offers neither is told so (409 for the hash,
 * as the batch API says; 422 for transfers).
 */
export function parseLfsBatchRequest(body: unknown): LfsBatchRequest {
  if (typeof body !== "object" || body === null) throw new LfsError(422, "body must be a JSON object");
  const record = body as Record<string, unknown>;
  const operation = record.operation;
  if (operation !== "upload" && operation !== "download") {
    throw new LfsError(422, 'operation must be "upload" or "download"');
  }
  if (record.hash_algo !== undefined && record.hash_algo !== "sha256") {
    throw new LfsError(409, "hash_algo: only sha256 is supported");
  }
  const transfers = record.transfers;
  if (transfers !== undefined && (!Array.isArray(transfers) || !transfers.includes("basic"))) {
    throw new LfsError(422, 'transfers: only the "basic" transfer adapter is supported');
  }
  const objects = record.objects;
  if (!Array.isArray(objects) || objects.length === 0) throw new LfsError(422, "objects must be a non-empty array");
  if (objects.length > MAX_BATCH_OBJECTS) {
    throw new LfsError(422, `objects: at most ${MAX_BATCH_OBJECTS} per batch`);
  }
  return {
    operation,
    objects: objects.map((item: unknown, index) => {
      const object = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
      if (typeof object.oid !== "string" || !OID.test(object.oid)) {
        throw new LfsError(422, `objects[${index}].oid must be 64 lower-case hex characters`);
      }
      if (typeof object.size !== "number" || !Number.isSafeInteger(object.size) || object.size < 0) {
        throw new LfsError(422, `objects[${index}].size must be a non-negative integer`);
      }
      return { oid: object.oid, size: object.size };
    }),
  };
}

/** One action of the basic adapter: where to send or fetch the bytes, and with which headers. */
interface LfsAction {
  readonly href: string;
  readonly header?: Readonly<Record<string, string>>;
  readonly expires_in: number;
}

export type LfsObjectResponse =
  | { oid: string; size: number; authenticated: true; actions?: Record<string, LfsAction> }
  | { oid: string; size: number; error: { code: number; message: string } };

/** How long an action href is good for; the client asks for a new batch after it. */
const ACTION_EXPIRES_IN_S = 3600;

/**
 * Answers each object of a batch: uploads get an `upload` action unless we already hold the object
 * (then no action: the client skips it), downloads a `download` action or a per-object 404.
 */
export async function answerLfsBatch(
  request: LfsBatchRequest,
  deps: {
    /** Size of the stored object, or undefined when there is none. */
    readonly storedSize: (oid: string) => Promise<number | undefined>;
    /** Our own `PUT`/`GET .../info/lfs/objects/{oid}` address. */
    readonly objectHref: (oid: string) => string;
    /** Sent back on each action so the transfer authenticates as the batch did. */
    readonly header?: Readonly<Record<string, string>>;
  },
): Promise<{ transfer: "basic"; objects: LfsObjectResponse[]; hash_algo: "sha256" }> {
  const objects = await Promise.all(
    request.objects.map(async ({ oid, size }): Promise<LfsObjectResponse> => {
      const stored = await deps.storedSize(oid);
      const action: LfsAction = {
        href: deps.objectHref(oid),
        ...(deps.header ? { header: deps.header } : {}),
        expires_in: ACTION_EXPIRES_IN_S,
      };
      if (request.operation === "upload") {
        return stored === size
          ? { oid, size, authenticated: true }
          : { oid, size, authenticated: true, actions: { upload: action } };
      }
      if (stored === undefined) return { oid, size, error: { code: 404, message: "object does not exist" } };
      return { oid, size: stored, authenticated: true, actions: { download: action } };
    }),
  );
  return { transfer: "basic", objects, hash_algo: "sha256" };
}
