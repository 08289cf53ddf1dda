#!/usr/bin/env node
// The platform-server binary. The server is TypeScript run through tsx's loader, so the binary
// and the sources can never disagree.
import { register } from "tsx/esm/api";

register();
// Before protobuf-es loads: it picks its base64 encoder once (see uint8array-to-base64.ts).
const { installUint8ArrayToBase64 } = await import("../src/transport/uint8array-to-base64.ts");
installUint8ArrayToBase64();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
