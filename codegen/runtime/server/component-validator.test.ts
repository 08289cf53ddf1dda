import { describe, expect, it } from "vitest";
import type { RestValidationSchemas } from "../rest/rest-plane.js";
import { createComponentValidator } from "./component-validator.js";

const schemas: RestValidationSchemas = {
  $id: "urn:test:components",
  $defs: {
    Settings: {
      type: "object",
      additionalProperties: false,
      properties: {
        redirect_uris: { type: "array", items: { type: "string", format: "uri" } },
        signup_enabled: { type: "boolean", default: true },
      },
    },
  },
};

describe("createComponentValidator", () => {
  const validator = createComponentValidator(schemas);

  it("accepts a valid value without filling in its defaults", () => {
    const value = { redirect_uris: ["https://app.example/cb"] };
    validator.check("Settings", value, "body.settingsJson");
    expect(value).toEqual({ redirect_uris: ["https://app.example/cb"] });
  });

  it("names the member at fault below the field", () => {
    expect(() => validator.check("Settings", { redirect_uris: ["not a uri"] }, "body.settingsJson")).toThrow(
      /body\.settingsJson\.redirect_uris\[0\]/,
    );
    expect(() => validator.check("Settings", { colour: "red" }, "body.settingsJson")).toThrow(/colour/);
  });

  it("refuses an unknown component", () => {
    expect(() => validator.check("Nope", {}, "body")).toThrow(/no component schema Nope/);
  });
});
