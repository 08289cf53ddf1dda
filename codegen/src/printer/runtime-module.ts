/** The module specifier generated code imports the runtime from (codegen/runtime). */
export const RUNTIME_MODULE = "@platform/codegen/runtime";

/** The runtime's server half, which only server code imports (Node only). */
export const SERVER_RUNTIME_MODULE = "@platform/codegen/runtime/server";
