/**
 * Path and query of a request target, taken as sent: `new URL` would resolve dot segments and
 * read `//host/...` as an authority, routing a request to a path the client never asked for.
 */
export function splitRequestTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  const rest = origin ? target.slice(origin[0].length) || "/" : target;
  const end = rest.search(/[?#]/);
  const pathname = end === -1 ? rest : rest.slice(0, end);
  const query = end !== -1 && rest[end] === "?" ? rest.slice(end + 1).split("#")[0]! : "";
  return { pathname, searchParams: new URLSearchParams(query) };
}
