/**
 * The `google.api.http` path-template grammar: parse a template once, print it for messages and
 * OpenAPI, route requests with it on the server, expand it into a URL in the SDK.
 */
export type { PathRoute, PathSegment, PathTemplate, PathVariable } from "./path-template.js";
export { isMultiSegmentVariable } from "./path-template.js";
export { PathTemplateError, type PathTemplateErrorDetails } from "./path-template-error.js";
export { parsePathTemplate } from "./parse.js";
export {
  formatPathPattern,
  formatPathTemplate,
  toOpenApiPath,
  type OpenApiPath,
  type OpenApiPathParameter,
} from "./format.js";
export { createPathMatcher, type MatchResult, type PathMatcher } from "./match.js";
export { findAmbiguousRoutes } from "./ambiguity.js";
export { expandPathTemplate } from "./expand.js";
