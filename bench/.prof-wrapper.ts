process.on("SIGTERM", () => process.exit(0));
await import("./get-env-var-server.js");
