/**
 * A throwaway ClickHouse server for tests and benchmarks, from Debian's `clickhouse-server`
 * package (installed when missing): its own configuration, data and logs in a fresh temporary
 * folder, listening on 127.0.0.1 only, on free ports, user `default` without a password.
 *
 * The server runs under a small shell watchdog that holds a pipe from this process: when this
 * process goes away for any reason (even SIGKILL), the pipe closes and the watchdog stops the
 * server and deletes the folder, so nothing is left behind.
 *
 * As a command: `node scripts/clickhouse.ts` prints the URL and runs until Ctrl-C.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freePorts } from "./ports.ts"
import { runUntilStopped } from "./runUntilStopped.ts"

export const clickHouseServerBin = "/usr/sbin/clickhouse-server"

export interface ClickHouseServer {
  /** `http://127.0.0.1:<port>`, no credentials nor database */
  readonly url: string
  readonly httpPort: number
  readonly tcpPort: number
  /** the temporary folder holding configuration, data and logs */
  readonly dataDir: string
  /** stops the server process, keeping its data: `startProcess` brings it back (a database outage) */
  readonly stopProcess: () => Promise<void>
  /** starts the server again on the same ports and data */
  readonly startProcess: () => Promise<void>
  readonly restart: () => Promise<void>
  /** stops the server for good and deletes its folder */
  readonly stop: () => Promise<void>
}

/** Installs Debian's package when the server binary is missing (needs root, as on the CI machines). */
export const ensureClickHouseInstalled = (): void => {
  if (fs.existsSync(clickHouseServerBin)) return
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
  execFileSync("apt-get", ["install", "-y", "clickhouse-server"], { stdio: ["ignore", "ignore", "inherit"], env })
  if (!fs.existsSync(clickHouseServerBin)) throw new Error(`apt-get installed clickhouse-server but ${clickHouseServerBin} is missing`)
}

const configXml = (dir: string, httpPort: number, tcpPort: number, extraConfig: string) => `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${dir}/log/server.log</log>
    <errorlog>${dir}/log/error.log</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <keep_alive_timeout>10</keep_alive_timeout>
  <max_concurrent_queries>200</max_concurrent_queries>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
${extraConfig}</yandex>
`

const usersXml = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks>
        <ip>127.0.0.1</ip>
        <ip>::1</ip>
      </networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`

/**
 * Runs a server (the command after $1) under a shell watchdog that holds a pipe from this
 * process; $1 is the server's folder. SIGUSR1 (`stopProcess`): stop the server, keep the folder.
 * SIGUSR2 (`stopWatched(child, { discard: true })`): kill it at once and delete the folder (its
 * data is not kept: no need to wait for a clean shutdown). End of input (this process closed the
 * pipe, or died) or a termination signal: stop the server, delete the folder.
 */
const watchdogScript = `
dir=$1; shift
"$@" >/dev/null 2>&1 &
server=$!
stop_server() { kill -TERM $server 2>/dev/null; wait $server; }
trap 'stop_server; exit 0' USR1
trap 'kill -KILL $server 2>/dev/null; wait $server; rm -rf "$dir"; exit 0' USR2
trap 'stop_server; rm -rf "$dir"; exit 0' TERM INT HUP
while read -r _; do :; done
stop_server
rm -rf "$dir"
`

/** `command` running under the watchdog, which this process does not wait for (a test that forgets to stop it does not hang) */
export const spawnWatched = (dir: string, command: ReadonlyArray<string>): ChildProcess => {
  const child = spawn("bash", ["-c", watchdogScript, "server-watchdog", dir, ...command], { stdio: ["pipe", "ignore", "inherit"] })
  child.unref()
  ;(child.stdin as net.Socket).unref()
  return child
}

/** stops a watched server, keeping its folder (or, `discard`, killing it and deleting its folder); resolves once it is down */
export const stopWatched = async (child: ChildProcess, options: { readonly discard?: boolean } = {}): Promise<void> => {
  child.ref() // keep this process alive until the server is down
  child.kill(options.discard === true ? "SIGUSR2" : "SIGUSR1")
  await exited(child)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const pings = async (url: string): Promise<boolean> => {
  try {
    const response = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) })
    return response.ok && (await response.text()).startsWith("Ok")
  } catch {
    return false
  }
}

const logTail = (dir: string): string => {
  try {
    return fs.readFileSync(path.join(dir, "log/error.log"), "utf8").split("\n").slice(-20).join("\n")
  } catch {
    return "(no error log)"
  }
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

export interface ClickHouseOptions {
  /** the HTTP and native ports (free ones when not given) */
  readonly ports?: { readonly http: number; readonly tcp: number }
  /** more of the server's configuration, inside `<yandex>` (scripts/clickhouseCluster.ts: a replica's) */
  readonly extraConfig?: string
}

export const startClickHouse = async (options: ClickHouseOptions = {}): Promise<ClickHouseServer> => {
  ensureClickHouseInstalled()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-clickhouse-"))
  for (const folder of ["data", "tmp", "log", "user_files", "format_schemas"]) fs.mkdirSync(path.join(dataDir, folder))
  const [httpPort, tcpPort] = options.ports === undefined ? await freePorts(2) : [options.ports.http, options.ports.tcp]
  const configFile = path.join(dataDir, "config.xml")
  fs.writeFileSync(configFile, configXml(dataDir, httpPort, tcpPort, options.extraConfig ?? ""))
  fs.writeFileSync(path.join(dataDir, "users.xml"), usersXml)
  const url = `http://127.0.0.1:${httpPort}`

  let watchdog: ChildProcess | undefined

  const startProcess = async () => {
    if (watchdog !== undefined) return
    const child = spawnWatched(dataDir, [clickHouseServerBin, `--config-file=${configFile}`])
    watchdog = child
    const deadline = Date.now() + 60_000
    while (!(await pings(url))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stopProcess()
        throw new Error(`ClickHouse did not start on ${url}:\n${logTail(dataDir)}`)
      }
      await sleep(100)
    }
  }

  const stopProcess = async () => {
    const child = watchdog
    if (child === undefined) return
    watchdog = undefined
    await stopWatched(child)
  }

  // its data goes: killed rather than shut down cleanly (which takes seconds with replicated tables)
  const stop = async () => {
    const child = watchdog
    watchdog = undefined
    if (child !== undefined) await stopWatched(child, { discard: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
  }

  try {
    await startProcess()
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  return {
    url,
    httpPort,
    tcpPort,
    dataDir,
    stopProcess,
    startProcess,
    restart: async () => {
      await stopProcess()
      await startProcess()
    },
    stop
  }
}

if (import.meta.main) {
  const server = await startClickHouse()
  console.log(server.url)
  runUntilStopped(server.stop)
}
