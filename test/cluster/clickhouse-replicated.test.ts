/**
 * A replicated ClickHouse (GATEWAY_CLICKHOUSE_CLUSTER_NAME, docs/deploying.md): a
 * real cluster on this machine (scripts/clickhouseCluster.ts: ZooKeeper and two ClickHouse
 * replicas of one shard). Two gateways started at once, one per replica, migrate the cluster
 * together: every table is Replicated on both replicas, each migration recorded once. What is
 * written through one gateway is read through the other. A gateway given both replicas' URLs
 * keeps writing while one replica is down; once it is back, both replicas hold every accepted
 * inference exactly once; a gateway started while a replica is down starts and reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs"
import { v7 as uuidv7 } from "uuid"
import { type ClickHouseCluster, startClickHouseCluster } from "../../scripts/clickhouseCluster.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { getInferences, observabilityToml, poll, queueStats, userInput, waitForInferences } from "../support/observability.ts"

const config = `
${observabilityToml()}

[metrics.good]
type = "boolean"
level = "inference"
optimize = "max"

[functions.replicated]
type = "chat"
[functions.replicated.variants.a]
type = "chat_completion"
model = "dummy::hello"
`

const database = `gateway_replicated_${process.pid}`
const migrationCount = fs.readdirSync(new URL("../../migrations/clickhouse/", import.meta.url)).filter((file) => file.endsWith(".sql")).length

/** the answer of `statement` on one replica, sent directly (not through a gateway) */
const sendToReplica = async (replicaUrl: string, statement: string): Promise<string> => {
  const response = await fetch(`${replicaUrl}/?database=${database}`, { method: "POST", body: statement })
  const text = await response.text()
  if (!response.ok) throw new Error(`${statement}: ${text}`)
  return text
}

/** the rows of `query` on one replica */
const onReplica = async (replicaUrl: string, query: string): Promise<Array<Record<string, any>>> =>
  JSON.parse(await sendToReplica(replicaUrl, `${query} FORMAT JSON`)).data

describe("a replicated ClickHouse cluster: two replicas, gateways on either", () => {
  let cluster: ClickHouseCluster
  const gateways: Array<RunningGateway> = []
  const urlOf = (replica: number) => `${cluster.replicas[replica].url}/${database}`
  const startOn = async (urls: ReadonlyArray<string>) => {
    const gateway = await startGateway({
      config,
      env: { GATEWAY_ANALYTICS_DB_URL: urls.join(","), GATEWAY_CLICKHOUSE_CLUSTER_NAME: cluster.clusterName },
      startTimeoutMs: 60_000
    })
    gateways.push(gateway)
    return gateway
  }
  const infer = (gateway: RunningGateway, text: string) =>
    gateway.post("/inference", { function_name: "replicated", input: userInput(text), episode_id: uuidv7() })

  let gatewayA: RunningGateway
  let gatewayB: RunningGateway

  beforeAll(async () => {
    cluster = await startClickHouseCluster()
    // started together: both migrate the cluster at once
    ;[gatewayA, gatewayB] = await Promise.all([startOn([urlOf(0)]), startOn([urlOf(1)])])
  }, 120_000)

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await cluster?.stop()
  }, 60_000)

  it("every table is Replicated on both replicas, and each migration is recorded once (FINAL merges a version recorded twice)", async () => {
    const tablesOf = (replica: number) =>
      onReplica(cluster.replicas[replica].url, `SELECT name, engine FROM system.tables WHERE database = '${database}' ORDER BY name`)
    const [first, second] = await Promise.all([tablesOf(0), tablesOf(1)])
    expect(second).toEqual(first)
    const tables = first.filter((table) => table.engine !== "MaterializedView")
    expect(tables.length).toBeGreaterThan(20)
    expect(tables.filter((table) => !table.engine.startsWith("Replicated"))).toEqual([])
    expect(first.filter((table) => table.engine === "MaterializedView").length).toBeGreaterThan(0)
    for (const replica of [0, 1]) {
      const [recorded] = await onReplica(cluster.replicas[replica].url, "SELECT count() AS versions FROM GatewayMigration FINAL")
      expect(Number(recorded.versions)).toBe(migrationCount)
    }
  })

  it("a cluster name the servers do not know stops the gateway at start-up, naming it", async () => {
    await expect(startGateway({
      config,
      env: { GATEWAY_ANALYTICS_DB_URL: urlOf(0), GATEWAY_CLICKHOUSE_CLUSTER_NAME: "no_such_cluster" }
    })).rejects.toThrow(/no cluster `no_such_cluster`/)
  })

  it("inferences and their feedback written through one replica are read through the other", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const response = await infer(gatewayA, `written on replica 1: ${i}`)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      ids.push(response.body.inference_id)
    }
    for (const [i, id] of ids.entries()) {
      const response = await gatewayA.post("/feedback", { metric_name: "good", inference_id: id, value: i % 2 === 0 })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
    }
    const read = await waitForInferences(gatewayB, ids, { timeoutMs: 20_000 })
    expect(read.map((inference) => inference.inference_id)).toEqual(ids)
    const feedback = await poll("the feedback, through the other replica", async () => {
      const found = await getInferences(gatewayB, ids, { include_feedback: true })
      const values = found.map((inference) => inference.feedback?.find((item: any) => item.metric_name === "good")?.value)
      return values.every((value) => value !== undefined) ? values : undefined
    }, { timeoutMs: 20_000 })
    expect(feedback).toEqual(ids.map((_, i) => i % 2 === 0))
  })

  it("a gateway given both replicas keeps every accepted inference while one is down, each stored once", async () => {
    const gateway = await startOn([urlOf(0), urlOf(1)])
    const accepted: Array<string> = []
    let refused = 0
    let writing = true
    /** inferences one after the other, about a hundred a second, as long as `writing`: the load the outage happens under */
    const load = (async () => {
      for (let i = 0; writing; i++) {
        const response = await infer(gateway, `under load: ${i}`).catch(() => undefined)
        if (response?.status === 200) accepted.push(response.body.inference_id)
        else refused++
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })()
    const acceptedAtLeast = (count: number) => poll(`${count} inferences accepted`, async () => (accepted.length >= count ? true : undefined), { timeoutMs: 20_000 })

    await acceptedAtLeast(20)
    await cluster.replicas[0].stopProcess()
    const writtenBefore = (await queueStats(gateway)).written
    await acceptedAtLeast(accepted.length + 40)
    // written while replica 1 is down: stored through replica 2
    await poll("writes stored while replica 1 is down", async () => {
      const stats = await queueStats(gateway)
      return stats.written >= writtenBefore + 40 ? true : undefined
    }, { timeoutMs: 20_000, last: () => gateway.log().slice(-3000) })
    // a gateway started now, replica 1 (its first URL) down: the database is up to date, so it
    // runs no distributed DDL (which would wait for replica 1), and reads through replica 2
    const late = await startOn([urlOf(0), urlOf(1)])
    const writtenDuringOutage = accepted.slice(-10)
    expect((await waitForInferences(late, writtenDuringOutage)).map((inference) => inference.inference_id)).toEqual(writtenDuringOutage)
    await cluster.replicas[0].startProcess()
    await acceptedAtLeast(accepted.length + 20)
    writing = false
    await load
    expect(refused).toBe(0)

    await poll("the write queue to drain", async () => ((await queueStats(gateway)).queued === 0 ? true : undefined), { timeoutMs: 20_000 })
    const stats = await queueStats(gateway)
    expect(stats.dropped).toBe(0)
    expect(stats.rejected).toBe(0)

    // both replicas, once replicated: every accepted inference exactly once, merged at reading (FINAL)
    const idList = accepted.map((id) => `'${id}'`).join(", ")
    const count = (final: string) => `SELECT count() AS rows, uniqExact(id) AS ids FROM ChatInference ${final} WHERE id IN (${idList})`
    for (const { url } of cluster.replicas) {
      const counted = await poll(`${url} to hold the ${accepted.length} inferences`, async () => {
        const [row] = await onReplica(url, count("FINAL"))
        return Number(row.ids) === accepted.length ? row : undefined
      }, { timeoutMs: 30_000 })
      expect(Number(counted.rows)).toBe(accepted.length)
    }
    // and merged for good: OPTIMIZE on the leader (18.16 may fail to pass it on from another
    // replica just after an outage), whose merge the other replica then applies too
    const leader = await poll("a leader replica", async () => {
      for (const { url } of cluster.replicas) {
        const [row] = await onReplica(url, "SELECT is_leader FROM system.replicas WHERE table = 'ChatInference'")
        if (Number(row.is_leader) === 1) return url
      }
      return undefined
    })
    let refusal = ""
    await poll("OPTIMIZE to be taken", () =>
      sendToReplica(leader, "OPTIMIZE TABLE ChatInference FINAL").then(() => true, (error: Error) => {
        refusal = error.message
        return undefined
      }), { timeoutMs: 30_000, intervalMs: 500, last: () => refusal })
    for (const { url } of cluster.replicas) {
      const merged = await poll(`${url} to merge`, async () => {
        const [row] = await onReplica(url, count(""))
        return Number(row.rows) <= accepted.length ? row : undefined
      }, { timeoutMs: 30_000 })
      expect(Number(merged.rows)).toBe(accepted.length)
      expect(Number(merged.ids)).toBe(accepted.length)
    }
    // and the gateway on the replica that was down reads them all (a hundred at a time: a query's text has a limit)
    for (let start = 0; start < accepted.length; start += 100) {
      const ids = accepted.slice(start, start + 100)
      const read = await waitForInferences(gatewayA, ids, { timeoutMs: 20_000 })
      expect(read.map((inference) => inference.inference_id)).toEqual(ids)
    }
  }, 90_000)
})
