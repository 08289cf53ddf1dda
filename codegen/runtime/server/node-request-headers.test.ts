import { describe, expect, it } from "vitest";
import { NodeRequestHeaders } from "./node-request-headers.js";

// Whatever is asked of it, the lazy view answers what a Headers filled from node's headers at once
// answers.

const incoming = {
  host: "127.0.0.1:8080",
  authorization: "Bearer dk_secret",
  "x-organization-name": "acme",
  "x-padded": " \tpadded value\t ",
  "set-cookie": ["a=1", "b=2"],
  accept: "application/json, text/plain",
  ":path": "/v1/script/env",
  ":method": "GET",
  empty: "",
};

/** How the headers were built before: every one copied into a Headers. */
function filled(headers: Record<string, string | string[] | undefined>): Headers {
  const header = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const item of value) header.append(name, item);
    else header.set(name, value);
  }
  return header;
}

const names = ["host", "Authorization", "X-ORGANIZATION-NAME", "x-padded", "set-cookie", "accept", "empty", "absent"];

describe("a request's headers read from node's", () => {
  it("answer get and has as a filled Headers does, in any case of the name", () => {
    const lazy = new NodeRequestHeaders(incoming);
    const eager = filled(incoming);
    for (const name of names) {
      expect([name, lazy.get(name)]).toEqual([name, eager.get(name)]);
      expect([name, lazy.has(name)]).toEqual([name, eager.has(name)]);
    }
  });

  it("refuse a name that is not a token, pseudo-headers included, as Headers does", () => {
    const lazy = new NodeRequestHeaders(incoming);
    for (const name of [":path", "bad name", "é"]) {
      expect(() => filled(incoming).get(name)).toThrow(TypeError);
      expect(() => lazy.get(name)).toThrow(TypeError);
    }
  });

  it("iterate, copy and list cookies as a filled Headers does", () => {
    const eager = filled(incoming);
    expect([...new NodeRequestHeaders(incoming)]).toEqual([...eager]);
    expect([...new NodeRequestHeaders(incoming).keys()]).toEqual([...eager.keys()]);
    expect([...new NodeRequestHeaders(incoming).values()]).toEqual([...eager.values()]);
    expect([...new NodeRequestHeaders(incoming).entries()]).toEqual([...eager.entries()]);
    expect(new NodeRequestHeaders(incoming).getSetCookie()).toEqual(eager.getSetCookie());
    const seen: string[] = [];
    new NodeRequestHeaders(incoming).forEach((value, name) => seen.push(`${name}=${value}`));
    expect(seen).toEqual([...eager].map(([name, value]) => `${name}=${value}`));
    expect(Object.fromEntries(new Headers(new NodeRequestHeaders(incoming)))).toEqual(Object.fromEntries(eager));
    expect(new NodeRequestHeaders(incoming)).toBeInstanceOf(Headers);
  });

  it("take changes on top of what was received, without touching node's headers", () => {
    const source = { ...incoming };
    const lazy = new NodeRequestHeaders(source);
    const eager = filled(incoming);
    for (const headers of [lazy, eager]) {
      headers.set("x-request-id", "r1");
      headers.append("accept", "text/html");
      headers.delete("authorization");
    }
    expect([...lazy]).toEqual([...eager]);
    expect(lazy.get("authorization")).toBeNull();
    expect(lazy.get("x-request-id")).toBe("r1");
    expect(source).toEqual(incoming);
  });
});
