import { describe, expect, it } from "vitest";
import { ActionsService } from "../../../gen/platform/data/actions/v1/actions_service_pb.js";
import { ActionsServiceRoutes } from "../../../gen/platform/data/actions/v1/actions_service_http.js";
import { ActionsServiceAccess } from "../../../gen/platform/data/actions/v1/actions_service_server.js";
import type { ServiceBinding } from "../service-registrar.js";
import { createStreamErrorFolder } from "./stream-error-folding.js";

// The folding itself is exercised over every protocol in codegen/test/stream-error-folding.test.ts;
// here, what a hand-made binding the generator would never write is told at registration.
const binding = (streamErrorEvents: Record<string, string>): ServiceBinding => ({
  service: ActionsService,
  routes: ActionsServiceRoutes.routes,
  access: ActionsServiceAccess,
  streamErrorEvents,
});

describe("createStreamErrorFolder", () => {
  it("accepts the generated binding's paths", () => {
    expect(() => createStreamErrorFolder([binding({ runAction: "failed.error" })])).not.toThrow();
  });

  it("refuses an event on a method that is no server stream", () => {
    expect(() => createStreamErrorFolder([binding({ getActionRun: "failed.error" })])).toThrow(
      'platform.data.actions.v1.ActionsService: stream error event of "getActionRun", which is no server stream',
    );
  });

  it("refuses a path that names no field of the stream's message", () => {
    expect(() => createStreamErrorFolder([binding({ runAction: "failure.error" })])).toThrow(
      'platform.data.actions.v1.ActionEvent: stream error event path "failure.error" names no field',
    );
  });
});
