// Child processes of the benchmark and the soak: node scripts started from the repository's
// root, killed when the parent exits, each resolving once its output shows what it serves.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const children: Array<ChildProcess> = []
process.on("exit", () => children.forEach((child) => child.kill("SIGKILL")))

export interface StartedProcess {
  /** the first group of `pattern`'s first match in the output */
  readonly match: string
  readonly child: ChildProcess
  readonly pid: number
  /** the output so far (its last 500 KB or more) */
  readonly output: () => string
}

/** starts `node [nodeArgs] command` and resolves once `pattern` matches its stdout or stderr */
export const startProcess = (
  command: ReadonlyArray<string>,
  pattern: RegExp,
  /** `cwd`: another checkout to run `command` from (default: this repository's root) */
  options: { readonly env?: Record<string, string>; readonly nodeArgs?: ReadonlyArray<string>; readonly cwd?: string } = {}
) =>
  new Promise<StartedProcess>((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...command], { cwd: options.cwd ?? root, env: { ...process.env, ...options.env } })
    children.push(child)
    let output = ""
    const onData = (data: Buffer) => {
      output += data
      if (output.length > 1_000_000) output = output.slice(-500_000)
      const match = pattern.exec(output)
      if (match !== null) resolve({ match: match[1], child, pid: child.pid!, output: () => output })
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("exit", (code) => reject(new Error(`${command.join(" ")} exited with ${code}:\n${output}`)))
  })

// ---- a process's CPU time and memory from /proc (Linux)

/** CPU time used so far by `pid`: utime + stime in clock ticks of 10 ms; 0 if gone or not Linux */
export const ticksOf = (pid: number | string): number => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** a field of /proc/<pid>/status in bytes: `VmRSS` (resident now) or `VmHWM` (resident at most, so far); 0 if unknown */
export const memoryOf = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}
