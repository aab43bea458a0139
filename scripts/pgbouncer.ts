/**
 * A throwaway PgBouncer (Debian's `pgbouncer` package, installed when missing) in transaction
 * pooling mode, in front of a Postgres server that trusts local connections: its own
 * configuration in a fresh temporary folder, listening on 127.0.0.1 on a free port, any
 * database name passed through to the server of the same name, any user let in (`auth_type =
 * trust`). PgBouncer refuses to run as root: as root it runs as the `postgres` user.
 *
 * Like scripts/clickhouse.ts, it runs under a shell watchdog holding a pipe from this process:
 * when this process goes away (even SIGKILL), the watchdog stops it and deletes the folder.
 *
 * As a command: `node scripts/pgbouncer.ts [host:port]` prints the URL and runs until Ctrl-C.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import type * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freePort } from "./ports.ts"
import { accepts } from "./postgres.ts"

export const pgBouncerBin = "/usr/sbin/pgbouncer"

export interface PgBouncer {
  /** `postgres://postgres@127.0.0.1:<port>`: add `/<database>` */
  readonly url: string
  readonly port: number
  /** the server connections PgBouncer keeps per database and user */
  readonly poolSize: number
  readonly stop: () => Promise<void>
}

/** Installs Debian's package when the binary is missing (needs root, as on the CI machines). */
export const ensurePgBouncerInstalled = (): void => {
  if (fs.existsSync(pgBouncerBin)) return
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
  execFileSync("apt-get", ["install", "-y", "pgbouncer"], { stdio: ["ignore", "ignore", "inherit"], env })
  if (!fs.existsSync(pgBouncerBin)) throw new Error(`apt-get installed pgbouncer but ${pgBouncerBin} is missing`)
}

const isRoot = () => process.getuid?.() === 0

/** `command` as the `postgres` user when this process is root (Postgres and PgBouncer refuse root) */
export const asPostgresUser = (command: ReadonlyArray<string>): Array<string> =>
  isRoot() ? ["runuser", "-u", "postgres", "--", ...command] : [...command]

/** a fresh temporary folder the `postgres` user owns when this process is root */
export const folderForPostgresUser = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  if (isRoot()) execFileSync("chown", ["postgres:", dir])
  return dir
}

/**
 * $1 folder, then the command. End of input (this process closed the pipe, or died) or a
 * termination signal: stop the command (through its pid file: it may run under runuser), delete the folder.
 */
const watchdogScript = `
dir="$1"; shift
"$@" >"$dir/out.log" 2>&1 &
stop_all() { [ -f "$dir/pgbouncer.pid" ] && kill -TERM "$(cat "$dir/pgbouncer.pid")" 2>/dev/null; sleep 0.2; rm -rf "$dir"; exit 0; }
trap stop_all TERM INT HUP
while read -r _; do :; done
stop_all
`

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()))

export const startPgBouncer = async (
  server: { readonly host: string; readonly port: number },
  options: { readonly poolSize?: number } = {}
): Promise<PgBouncer> => {
  ensurePgBouncerInstalled()
  const dir = folderForPostgresUser("gateway-pgbouncer-")
  const port = await freePort()
  const poolSize = options.poolSize ?? 20
  const ini = path.join(dir, "pgbouncer.ini")
  fs.writeFileSync(path.join(dir, "users.txt"), "\"postgres\" \"\"\n")
  fs.writeFileSync(ini, `[databases]
* = host=${server.host} port=${server.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
pidfile = ${dir}/pgbouncer.pid
auth_type = trust
auth_file = ${dir}/users.txt
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 500
; a server connection that failed is tried again soon: the tests restart servers
server_login_retry = 1
`)
  fs.chmodSync(ini, 0o644)
  fs.chmodSync(path.join(dir, "users.txt"), 0o644)
  const child = spawn("bash", ["-c", watchdogScript, "pgbouncer-watchdog", dir, ...asPostgresUser([pgBouncerBin, ini])], {
    stdio: ["pipe", "ignore", "inherit"]
  })
  child.unref()
  ;(child.stdin as net.Socket).unref()
  const stop = async () => {
    if (child.exitCode !== null) return
    child.ref()
    child.stdin?.end()
    await exited(child)
  }
  const deadline = Date.now() + 15_000
  while (!(await accepts("127.0.0.1", port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = fs.existsSync(path.join(dir, "out.log")) ? fs.readFileSync(path.join(dir, "out.log"), "utf8") : ""
      await stop()
      throw new Error(`PgBouncer did not start on 127.0.0.1:${port}:\n${log}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url: `postgres://postgres@127.0.0.1:${port}`, port, poolSize, stop }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [host, port] = (process.argv[2] ?? "127.0.0.1:5432").split(":")
  const bouncer = await startPgBouncer({ host, port: Number(port) })
  console.log(bouncer.url)
  process.on("SIGINT", () => void bouncer.stop().then(() => process.exit(0)))
}
