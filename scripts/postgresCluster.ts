/**
 * A private Postgres cluster for a test that must stop and start its server (the machine's
 * shared server on 5432 serves the other tests): `initdb` of the installed version in a fresh
 * temporary folder, listening on 127.0.0.1 on a free port, trusting every local connection.
 * Postgres refuses to run as root: as root it runs as the `postgres` user.
 *
 * A shell watchdog holding a pipe from this process stops the server (`pg_ctl stop -m
 * immediate`) and deletes the folder when this process goes away, even by SIGKILL.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import type * as net from "node:net"
import * as path from "node:path"
import { asPostgresUser, folderForPostgresUser } from "./pgbouncer.ts"
import { freePort } from "./ports.ts"
import { accepts, ensurePostgres } from "./postgres.ts"

export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** `pg_ctl stop -m fast`: the server goes away, its data stays */
  readonly stopServer: () => Promise<void>
  /** starts the server again on the same port and data */
  readonly startServer: () => Promise<void>
  /** stops the server for good and deletes its folder */
  readonly stop: () => Promise<void>
}

/** the folder of the newest installed Postgres's programs (installing Postgres first when missing) */
const binFolder = async (): Promise<string> => {
  await ensurePostgres()
  const root = "/usr/lib/postgresql"
  const versions = fs.readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error(`no Postgres under ${root}`)
  return path.join(root, versions[0], "bin")
}

/** $1 pg_ctl, $2 data folder, $3 folder to delete; then the pg_ctl prefix (runuser ...) */
const watchdogScript = `
pgctl="$1"; data="$2"; dir="$3"; shift 3; prefix=("$@")
stop_all() { "\${prefix[@]}" "$pgctl" stop -D "$data" -m immediate >/dev/null 2>&1; rm -rf "$dir"; exit 0; }
trap stop_all TERM INT HUP
while read -r _; do :; done
stop_all
`

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()))

export const startPostgresCluster = async (): Promise<PostgresCluster> => {
  const bin = await binFolder()
  const dir = folderForPostgresUser("gateway-pgcluster-")
  const data = path.join(dir, "data")
  const port = await freePort()
  const run = (command: ReadonlyArray<string>) => {
    const [program, ...args] = asPostgresUser(command)
    execFileSync(program, args, { stdio: ["ignore", "ignore", "pipe"] })
  }
  // runuser ... when root: the watchdog runs pg_ctl as the server's user too
  const prefix = asPostgresUser([])
  const watchdog = spawn("bash", ["-c", watchdogScript, "postgres-watchdog", path.join(bin, "pg_ctl"), data, dir, ...prefix], {
    stdio: ["pipe", "ignore", "inherit"]
  })
  watchdog.unref()
  ;(watchdog.stdin as net.Socket).unref()
  const stop = async () => {
    if (watchdog.exitCode !== null) return
    watchdog.ref()
    watchdog.stdin?.end()
    await exited(watchdog)
  }
  const startServer = async () => {
    run([
      path.join(bin, "pg_ctl"), "start", "-D", data, "-l", path.join(dir, "server.log"), "-w", "-t", "30",
      "-o", `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=100 -c fsync=off`
    ])
    const deadline = Date.now() + 30_000
    while (!(await accepts("127.0.0.1", port))) {
      if (Date.now() > deadline) throw new Error(`Postgres did not start on 127.0.0.1:${port}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  try {
    run([path.join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
    await startServer()
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stopServer: async () => run([path.join(bin, "pg_ctl"), "stop", "-D", data, "-m", "fast", "-w"]),
    startServer,
    stop
  }
}
