// The process that starts git for the server (see ../README.md, "Starting git"). Plain JavaScript,
// so it starts in tens of milliseconds without the server's loader. Requests come over the IPC channel; each names
// which of git's stdin, stdout and stderr the server connects, and the server opens one connection
// per stream to this process's socket, in a directory only this user can enter. A connection starts
// with `<request id><fd digit>\n`; once every stream has arrived, git is started with the
// connections themselves as its standard streams, so its bytes never pass through this process.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout } from "node:timers";

const HEADER_BYTES = 36 + 2;

/**
 * Requests and connections meet here, whichever arrives first.
 * @type {Map<string, {request?: any, streams: (import("node:net").Socket | undefined)[]}>}
 */
const pending = new Map();
/** A connection whose request never comes (its server request failed) is dropped after this long. */
const STRAY_CONNECTION_MS = 30_000;
/** @type {Map<string, import("node:child_process").ChildProcess>} */
const running = new Map();

const send = (message) => {
  if (process.connected) process.send(message);
};

function entryOf(id) {
  let entry = pending.get(id);
  if (!entry) {
    entry = { streams: [undefined, undefined, undefined] };
    pending.set(id, entry);
    setTimeout(() => {
      if (pending.get(id) === entry && !entry.request) drop(id);
    }, STRAY_CONNECTION_MS).unref();
  }
  return entry;
}

function drop(id) {
  const entry = pending.get(id);
  pending.delete(id);
  for (const stream of entry?.streams ?? []) stream?.destroy();
}

function startIfComplete(id) {
  const entry = pending.get(id);
  if (!entry?.request || entry.request.stdio.some((wanted, fd) => wanted && !entry.streams[fd])) return;
  const { request, streams } = entry;
  let child;
  try {
    child = spawn(request.file, request.args, {
      env: request.env,
      cwd: request.cwd,
      // A process group of its own: a kill reaches whatever git starts (hooks, pack-objects).
      detached: true,
      stdio: request.stdio.map((wanted, fd) => (wanted ? streams[fd] : "ignore")),
    });
  } catch (error) {
    drop(id);
    return send({ type: "failed", id, message: error.message });
  }
  // git holds its own copies; ours must close so that the server sees git's end of the stream.
  drop(id);
  child.once("error", (error) => {
    running.delete(id);
    send({ type: "failed", id, message: error.message });
  });
  if (child.pid === undefined) return;
  running.set(id, child);
  child.once("exit", (code, signal) => {
    running.delete(id);
    send({ type: "exit", id, code, signal });
  });
  send({ type: "spawned", id });
}

const directory = mkdtempSync(join(tmpdir(), "git-launcher-"));
const socketPath = join(directory, "s");
const server = createServer((socket) => {
  socket.once("error", () => socket.destroy());
  const readHeader = () => {
    const header = socket.read(HEADER_BYTES);
    if (header === null) return socket.once("readable", readHeader);
    const text = header.toString("latin1");
    const id = text.slice(0, 36);
    const fd = Number(text[36]);
    if (!/^[0-9a-f-]{36}$/.test(id) || !(fd >= 0 && fd <= 2) || text[37] !== "\n") return socket.destroy();
    const entry = entryOf(id);
    if (entry.streams[fd]) return socket.destroy();
    entry.streams[fd] = socket;
    startIfComplete(id);
  };
  readHeader();
});
server.listen(socketPath, () => send({ type: "ready", path: socketPath }));

process.on("message", (message) => {
  if (message.type === "spawn") {
    entryOf(message.id).request = message;
    startIfComplete(message.id);
  } else if (message.type === "cancel") {
    drop(message.id);
  } else if (message.type === "kill") {
    const child = running.get(message.id);
    try {
      if (child?.pid) process.kill(-child.pid, message.signal);
    } catch {
      // Already gone.
    }
  }
});

// The server is gone: nobody reads what git writes any more.
function shutDown() {
  for (const child of running.values()) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
  server.close();
  rmSync(directory, { recursive: true, force: true });
  process.exit(0);
}
process.on("disconnect", shutDown);
// A server that died while this module loaded closed the channel before anyone listened.
if (!process.connected) shutDown();
