/**
 * Path and query of a request target, taken as sent: `new URL` would resolve dot segments and
 * read `//host/...` as an authority, routing a request to a path the client never asked for.
 */
export function splitRequestTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  const rest = withoutOrigin(target);
  const end = rest.search(/[?#]/);
  const pathname = end === -1 ? rest : rest.slice(0, end);
  const query = end !== -1 && rest[end] === "?" ? rest.slice(end + 1).split("#")[0]! : "";
  return { pathname, searchParams: new URLSearchParams(query) };
}

/** The path of a request target, as {@link splitRequestTarget} reads it, without parsing its query. */
export function pathOfRequestTarget(target: string): string {
  const rest = withoutOrigin(target);
  const end = rest.search(/[?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** An absolute-form target (`http://host/path`) without its scheme and authority. */
function withoutOrigin(target: string): string {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  return origin ? target.slice(origin[0].length) || "/" : target;
}
