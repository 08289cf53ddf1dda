#!/usr/bin/env node
// The platform-server binary. The server is TypeScript run through tsx's loader, so the binary
// and the sources can never disagree.
import { setFlagsFromString } from "node:v8";
import { register } from "tsx/esm/api";

// The JavaScript heap may grow to twice what survived the last full collection. V8's own factor
// follows how fast collections ran; in about half of the server starts measured it left the limit
// a few MB above the live heap, and a registry push then set off a full collection every 150 ms
// or so (ten in a 100 MiB push), for the life of the process. Read at each collection, so it
// applies although the heap already exists.
setFlagsFromString("--heap-growing-percent=100");

register();
// Before protobuf-es loads: it picks its base64 encoder once (see uint8array-to-base64.ts).
const { installUint8ArrayToBase64 } = await import("../src/transport/uint8array-to-base64.ts");
installUint8ArrayToBase64();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
