import type { OpenApiBuilder } from "openapi3-ts/oas31";

/**
 * Components every document shares: the error envelope and its responses, and the security
 * schemes. The error body is the Connect error JSON, the one envelope of every RPC plane.
 */
export function addErrorComponents(builder: OpenApiBuilder): void {
  builder.addSchema("platform.Error", {
    type: "object",
    description: "The error body of every failed call: a Connect error code, a message, and typed details.",
    properties: {
      code: {
        type: "string",
        description: "The error code.",
        enum: [
          "canceled",
          "unknown",
          "invalid_argument",
          "deadline_exceeded",
          "not_found",
          "already_exists",
          "permission_denied",
          "resource_exhausted",
          "failed_precondition",
          "aborted",
          "out_of_range",
          "unimplemented",
          "internal",
          "unavailable",
          "data_loss",
          "unauthenticated",
        ],
      },
      message: {
        type: "string",
        description: "What went wrong, for a developer; names the offending field when there is one.",
      },
      details: {
        type: "array",
        description: "Typed details (for example google.rpc.ErrorInfo or google.rpc.BadRequest).",
        items: {
          type: "object",
          properties: {
            type: { type: "string", description: "Full name of the detail's message type." },
            value: {
              type: "string",
              format: "byte",
              contentEncoding: "base64",
              description: "The detail message in binary, base64.",
            },
            debug: { description: "The detail message in JSON, when the server includes it." },
          },
          required: ["type", "value"],
        },
      },
    },
    required: ["code"],
  });
  const error = (description: string) => ({
    description,
    content: { "application/json": { schema: { $ref: "#/components/schemas/platform.Error" } } },
  });
  builder.addResponse(
    "BadRequest",
    error("Malformed input (`invalid_argument`, `out_of_range`, `failed_precondition`); the message names the field."),
  );
  builder.addResponse("Unauthenticated", error("Missing or invalid credentials (`unauthenticated`)."));
  builder.addResponse(
    "PermissionDenied",
    error("The credentials lack a role this method needs (`permission_denied`)."),
  );
  builder.addResponse(
    "NotFound",
    error("No such resource in the caller's organization (`not_found`), or no such route."),
  );
  builder.addResponse("Error", error("Any other failure, with the HTTP status of its code."));
}

/** The security schemes; the organization header only where some operation asks for it. */
export function addSecuritySchemes(builder: OpenApiBuilder, organizationHeader: boolean): void {
  builder.addSecurityScheme("bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key (`dk_...`) or access token: `Authorization: Bearer <token>`.",
  });
  if (!organizationHeader) return;
  builder.addSecurityScheme("organizationName", {
    type: "apiKey",
    in: "header",
    name: "x-organization-name",
    description: "The caller's organization; must name the organization of the bearer token.",
  });
}
