/**
 * What both generators write of a method a partial implementation leaves out. The runtime answers
 * it the same way on every protocol and plane, as the RPC wire rules give UNIMPLEMENTED its
 * status; codegen/test/not-implemented.test.ts holds both to it.
 */
export const NOT_IMPLEMENTED_DOC =
  "A method left out of a partial implementation answers UNIMPLEMENTED: HTTP 501 with code `unimplemented`.";
