/**
 * A throwaway Redis Cluster for tests: six `redis-server` processes on free ports of 127.0.0.1
 * (three masters, each with one replica, made with `redis-cli --cluster create`), keeping
 * nothing on disk but their cluster state, in a fresh temporary folder. A node that stops
 * answering is failed over within a few seconds (`cluster-node-timeout` of one second). Also
 * one standalone server configured unlike the machine's (`startRedisServer`).
 *
 * The servers run under a small shell watchdog that holds a pipe from this process: when this
 * process goes away for any reason (even SIGKILL), the pipe closes and the watchdog stops the
 * servers and deletes the folder, so nothing is left behind (as scripts/clickhouse.ts).
 *
 * As a command: `node scripts/redisCluster.ts` prints the nodes' URLs and runs until Ctrl-C.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import type * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { freePorts } from "./ports.ts"
import { ensureRedis } from "./redis.ts"
import { runUntilStopped } from "./runUntilStopped.ts"

const run = promisify(execFile)

export interface ClusterNodeInfo {
  readonly port: number
  readonly url: string
  /** the node's id in the cluster */
  readonly id: string
  readonly role: "master" | "replica"
  /** the node is reachable (not flagged `fail`) */
  readonly up: boolean
}

export interface RedisCluster {
  /** `redis://127.0.0.1:<port>` of each node, masters first as created */
  readonly urls: ReadonlyArray<string>
  /** runs `redis-cli -p <port> <args>` and returns its output */
  readonly cli: (port: number, ...args: ReadonlyArray<string>) => Promise<string>
  /** the port of the node serving `key`'s slot as master */
  readonly masterOf: (key: string) => Promise<number>
  /** every node as a reachable node sees them */
  readonly nodes: () => Promise<ReadonlyArray<ClusterNodeInfo>>
  /** kills the node on `port` (SIGKILL: it dies without a word) */
  readonly kill: (port: number) => void
  /** waits until every reachable node says `cluster_state:ok` and `key`'s slot has a reachable master */
  readonly waitUntilServing: (key: string, timeoutMs?: number) => Promise<number>
  /** stops every server and deletes the folder */
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const cliBin = "redis-cli"

/**
 * $1 server binary, $2 folder, $3 the ports (separated by spaces), then arguments for every
 * server. End of input or a termination signal: stop the servers, delete the folder.
 */
const watchdogScript = `
bin="$1"; dir="$2"; ports="$3"; shift 3
pids=""
for port in $ports; do
  mkdir -p "$dir/$port"
  "$bin" --port "$port" --bind 127.0.0.1 --dir "$dir/$port" --pidfile "$dir/$port/redis.pid" --logfile "$dir/$port/redis.log" \\
    --save '' --appendonly no "$@" >/dev/null 2>&1 &
  pids="$pids $!"
done
stop_servers() { kill -TERM $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap 'stop_servers; exit 0' TERM INT HUP
while read -r _; do :; done
stop_servers
`

/** the arguments that make a server a node of the test cluster */
const clusterArgs = [
  "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
  "--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0"
]

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

const serverBin = () => ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((file) => fs.existsSync(file))

/** waits until `check` holds, `timeoutMs` at most, saying `what` when it never does */
const waitFor = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    await sleep(100)
  }
  throw new Error(`redis cluster: ${what} within ${timeoutMs} ms${lastError === undefined ? "" : ` (${String(lastError)})`}`)
}

/** servers on `ports` with `args`, under a watchdog, in a new folder of their own */
const startServers = async (ports: ReadonlyArray<number>, args: ReadonlyArray<string>) => {
  // installs Debian's package when Redis is missing (it brings redis-cli too)
  if (serverBin() === undefined) await ensureRedis()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-redis-"))
  // (the shell's own stderr only reports the servers killed on purpose; theirs are logs in the folder)
  const watchdog = spawn("bash", ["-c", watchdogScript, "redis-watchdog", serverBin()!, dir, ports.join(" "), ...args], {
    stdio: ["pipe", "ignore", "ignore"]
  })
  // a test that forgets to stop the servers must not hang its process: the watchdog cleans up
  watchdog.unref()
  ;(watchdog.stdin as net.Socket).unref()
  const stop = async () => {
    if (watchdog.exitCode === null && watchdog.signalCode === null) {
      watchdog.ref() // keep this process alive until the servers are down
      watchdog.stdin!.end()
      await exited(watchdog)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const pidOf = (port: number) => Number(fs.readFileSync(path.join(dir, String(port), "redis.pid"), "utf8").trim())
  try {
    await waitFor("the servers did not answer", async () => {
      for (const port of ports) if ((await cli(port, "PING")).trim() !== "PONG") return undefined
      return true
    }, 15_000)
  } catch (error) {
    await stop()
    throw error
  }
  return { stop, pidOf }
}

const cli = async (port: number, ...args: ReadonlyArray<string>) =>
  (await run(cliBin, ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 30_000 })).stdout

export interface RedisServer {
  readonly url: string
  readonly stop: () => Promise<void>
}

/** one standalone server of its own, started with `args` besides the usual ones (for a server configured unlike the machine's) */
export const startRedisServer = async (args: ReadonlyArray<string>): Promise<RedisServer> => {
  const [port] = await freePorts(1)
  const { stop } = await startServers([port!], args)
  return { url: `redis://127.0.0.1:${port}`, stop }
}

export const startRedisCluster = async (): Promise<RedisCluster> => {
  const ports = await freePorts(6)
  const { stop, pidOf } = await startServers(ports, clusterArgs)
  const dead = new Set<number>()

  const alive = () => ports.filter((port) => !dead.has(port))

  const nodes = async (): Promise<ReadonlyArray<ClusterNodeInfo>> => {
    const text = await cli(alive()[0]!, "CLUSTER", "NODES")
    return text.trim().split("\n").map((line) => {
      const [id, address, flags] = line.split(" ")
      const port = Number(address!.split("@")[0]!.split(":")[1])
      const flagList = flags!.split(",")
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        id: id!,
        role: flagList.includes("master") ? "master" : "replica",
        up: !flagList.includes("fail") && !flagList.includes("fail?")
      } as const
    })
  }

  const masterOf = async (key: string) => {
    const slot = Number((await cli(alive()[0]!, "CLUSTER", "KEYSLOT", key)).trim())
    const slots = await cli(alive()[0]!, "--json", "CLUSTER", "SLOTS")
    const ranges = JSON.parse(slots) as Array<[number, number, [string, number, ...Array<unknown>], ...Array<unknown>]>
    const range = ranges.find(([from, to]) => from <= slot && slot <= to)
    if (range === undefined) throw new Error(`redis cluster: no node serves slot ${slot}`)
    return range[2][1]
  }

  const waitUntilServing = (key: string, timeoutMs = 20_000) =>
    waitFor(`no reachable master serves ${JSON.stringify(key)} with cluster_state:ok`, async () => {
      for (const port of alive()) {
        if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return undefined
      }
      const master = await masterOf(key)
      return dead.has(master) ? undefined : master
    }, timeoutMs)

  const kill = (port: number) => {
    process.kill(pidOf(port), "SIGKILL")
    dead.add(port)
  }

  try {
    await cli(ports[0]!, "--cluster", "create", ...ports.map((port) => `127.0.0.1:${port}`), "--cluster-replicas", "1", "--cluster-yes")
    await waitFor("the cluster did not come up", async () => {
      for (const port of ports) if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return undefined
      // every replica has its master's data, so that it can take over
      const replicas = (await nodes()).filter((node) => node.role === "replica")
      for (const replica of replicas) if (!(await cli(replica.port, "INFO", "replication")).includes("master_link_status:up")) return undefined
      return replicas.length === 3 ? true : undefined
    }, 30_000)
  } catch (error) {
    await stop()
    throw error
  }
  return { urls: ports.map((port) => `redis://127.0.0.1:${port}`), cli, masterOf, nodes, kill, waitUntilServing, stop }
}

if (import.meta.main) {
  const cluster = await startRedisCluster()
  console.log(cluster.urls.join("\n"))
  runUntilStopped(cluster.stop)
}
