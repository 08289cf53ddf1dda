import { defineConfig } from "drizzle-kit";

// `npm run db:generate -w server` writes a new SQL migration after a schema change.
export default defineConfig({
  dialect: "postgresql",
  schema: ["./src/auth/auth-schema.ts", "./src/services/*/*-schema.ts", "./src/services/git/collab/*/*-schema.ts"],
  out: "./migrations",
});
