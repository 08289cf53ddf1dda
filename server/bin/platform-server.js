#!/usr/bin/env node
// The platform-server binary. The server is TypeScript run through tsx's loader, so the binary
// and the sources can never disagree.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
