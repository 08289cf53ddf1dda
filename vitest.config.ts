import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["codegen/**/*.test.ts", "server/**/*.test.ts", "sdk/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
