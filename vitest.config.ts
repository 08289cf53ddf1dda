import { defineConfig } from "vitest/config";

// Two projects: unit and store tests, and end-to-end tests that share one running binary.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 90_000,
    projects: [
      {
        test: {
          name: "unit",
          include: ["codegen/**/*.test.ts", "server/**/*.test.ts", "sdk/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 30_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
    ],
  },
});
