// Entry of the json.transform worker threads. The server runs from TypeScript sources through
// tsx, but a worker starts with a bare loader: Node 20 neither passes the parent's module hooks
// to workers nor honours `--import` in a worker's execArgv, so the worker registers tsx itself
// before loading its TypeScript body. The same entry works under the binary and under vitest.
import { register } from "tsx/esm/api";

register();
await import("./cel-worker.ts");
