import { readdirSync, readFileSync } from "node:fs";

/** The live processes whose parent is `ppid` and whose command line mentions `name` (Linux /proc). */
export function childProcessesRunning(ppid: number, name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // After the command name in parentheses: the state, then the parent's pid.
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z" && Number(parent) === ppid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(name))
        pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}
