/** The module specifier generated code imports the runtime from (codegen/runtime). */
export const RUNTIME_MODULE = "@platform/codegen/runtime";
