import { Code, ConnectError } from "@connectrpc/connect";

/**
 * A vector in pgvector's text form (`[0.1,0.2]`), checked: the length must be the collection's
 * dimensions and every component finite (pgvector refuses NaN and Infinity with an error that
 * would otherwise surface as an internal one). `field` names the input in the error.
 */
export function vectorLiteral(values: ArrayLike<number>, dimensions: number, field: string): string {
  if (values.length !== dimensions)
    throw new ConnectError(
      `${field} has ${values.length} dimensions; the collection has ${dimensions}`,
      Code.InvalidArgument,
    );
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number" || !Number.isFinite(value))
      throw new ConnectError(`${field}[${i}] must be a finite number`, Code.InvalidArgument);
    parts[i] = String(value);
  }
  return `[${parts.join(",")}]`;
}
