/**
 * A throwaway replicated ClickHouse for tests: one ZooKeeper (Debian's `zookeeper` package, a
 * standalone server run by java) and ClickHouse servers (scripts/clickhouse.ts) forming one
 * shard of `replicas` replicas in the cluster `clusterName`, with the macros `{shard}` and
 * `{replica}` and distributed DDL (`ON CLUSTER`) set up, all on free ports of 127.0.0.1, each
 * under the watchdog that stops it and deletes its folder when this process goes away.
 *
 * As a command: `node scripts/clickhouseCluster.ts` prints the replicas' URLs and runs until Ctrl-C.
 */
import { type ChildProcess, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { type ClickHouseServer, spawnWatched, startClickHouse, stopWatched } from "./clickhouse.ts"
import { freePorts } from "./ports.ts"
import { runUntilStopped } from "./runUntilStopped.ts"

export const zooKeeperJar = "/usr/share/java/zookeeper.jar"

export interface ZooKeeperServer {
  readonly port: number
  readonly stop: () => Promise<void>
}

export interface ClickHouseCluster {
  readonly clusterName: string
  readonly zooKeeper: ZooKeeperServer
  /** the replicas of the one shard, in order (`{replica}` is `replica1`, `replica2`...) */
  readonly replicas: ReadonlyArray<ClickHouseServer>
  readonly stop: () => Promise<void>
}

/** Installs Debian's package when its jar is missing (needs root, as on the CI machines). */
const ensureZooKeeperInstalled = (): void => {
  if (fs.existsSync(zooKeeperJar) && fs.existsSync("/usr/bin/java")) return
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
  execFileSync("apt-get", ["install", "-y", "zookeeper"], { stdio: ["ignore", "ignore", "inherit"], env })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** ZooKeeper's four-letter `ruok`: `imok` once it serves */
const zooKeeperAnswers = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let answer = ""
    socket.setTimeout(1000, () => socket.destroy())
    socket.on("connect", () => socket.write("ruok"))
    socket.on("data", (data) => (answer += data.toString()))
    socket.on("error", () => resolve(false))
    socket.on("close", () => resolve(answer === "imok"))
  })

export const startZooKeeper = async (): Promise<ZooKeeperServer> => {
  ensureZooKeeperInstalled()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-zookeeper-"))
  const [port] = await freePorts(1)
  const config = path.join(dir, "zoo.cfg")
  fs.writeFileSync(config, [
    "tickTime=500",
    `dataDir=${dir}/data`,
    `clientPort=${port}`,
    "clientPortAddress=127.0.0.1",
    "admin.enableServer=false",
    "4lw.commands.whitelist=ruok",
    "maxSessionTimeout=30000",
    // a throwaway server: no fsync per transaction (each replicated table's creation is dozens)
    "forceSync=no"
  ].join("\n") + "\n")
  const child: ChildProcess = spawnWatched(dir, [
    "java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", zooKeeperJar, "org.apache.zookeeper.server.ZooKeeperServerMain", config
  ])
  const stop = async () => {
    await stopWatched(child, { discard: true })
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 60_000
  while (!(await zooKeeperAnswers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`ZooKeeper did not start on port ${port}`)
    }
    await sleep(100)
  }
  return { port, stop }
}

interface ReplicaPorts {
  readonly http: number
  readonly tcp: number
  readonly interserver: number
}

/** what a replica adds to scripts/clickhouse.ts's configuration */
const replicaConfig = (clusterName: string, zooKeeperPort: number, all: ReadonlyArray<ReplicaPorts>, index: number) => `
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${all[index].interserver}</interserver_http_port>
  <zookeeper>
    <node><host>127.0.0.1</host><port>${zooKeeperPort}</port></node>
    <session_timeout_ms>10000</session_timeout_ms>
  </zookeeper>
  <remote_servers>
    <${clusterName}>
      <shard>
        <internal_replication>true</internal_replication>
${all.map((ports) => `        <replica><host>127.0.0.1</host><port>${ports.tcp}</port></replica>`).join("\n")}
      </shard>
    </${clusterName}>
  </remote_servers>
  <macros>
    <shard>01</shard>
    <replica>replica${index + 1}</replica>
  </macros>
  <distributed_ddl>
    <path>/clickhouse/task_queue/ddl</path>
  </distributed_ddl>
`

export const startClickHouseCluster = async (replicaCount = 2, clusterName = "gateway_cluster"): Promise<ClickHouseCluster> => {
  const zooKeeper = await startZooKeeper()
  const replicas: Array<ClickHouseServer> = []
  try {
    const ports = await freePorts(3 * replicaCount)
    const all = Array.from({ length: replicaCount }, (_, index) => ({
      http: ports[3 * index],
      tcp: ports[3 * index + 1],
      interserver: ports[3 * index + 2]
    }))
    const started = await Promise.allSettled(all.map((replicaPorts, index) =>
      startClickHouse({ ports: replicaPorts, extraConfig: replicaConfig(clusterName, zooKeeper.port, all, index) })))
    for (const result of started) if (result.status === "fulfilled") replicas.push(result.value)
    for (const result of started) if (result.status === "rejected") throw result.reason
  } catch (error) {
    await Promise.all(replicas.map((replica) => replica.stop()))
    await zooKeeper.stop()
    throw error
  }
  return {
    clusterName,
    zooKeeper,
    replicas,
    stop: async () => {
      await Promise.all(replicas.map((replica) => replica.stop()))
      await zooKeeper.stop()
    }
  }
}

if (import.meta.main) {
  const cluster = await startClickHouseCluster()
  console.log(`cluster ${cluster.clusterName}: ${cluster.replicas.map((replica) => replica.url).join(" ")}`)
  runUntilStopped(cluster.stop)
}
