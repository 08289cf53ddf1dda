// Node-only part of the runtime: serving registered services over every protocol.
export { createRestHandler, type RestHandlerOptions, type RestRouteTarget } from "./rest-handler.js";
export { createServiceRouter, type ServiceRouter, type ServiceRouterOptions } from "./service-router.js";
