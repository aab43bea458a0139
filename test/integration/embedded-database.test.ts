/**
 * The embedded database (`pglite://<folder>`) with real gateway processes: both databases in one
 * folder, inferences and feedback stored and read back, pgvector available; a second gateway on
 * the folder refused naming the owner, while a one-shot command (creating an API key) reaches it
 * through the owner; rows stored before a SIGKILL are there after a restart (the dead owner's
 * lock taken over), and after a SIGTERM; workers > 1 refused; a folder of another format refused.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/databases.ts"
import { openStore, run } from "../support/storeFixtures.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll, waitForInference } from "../support/observability.ts"

const config = `
${observabilityToml()}
[metrics.liked]
type = "boolean"
level = "inference"
optimize = "max"
`

describe("the embedded database", () => {
  let folder: string
  let url: string
  let gateway: RunningGateway | undefined
  const env = () => ({ GATEWAY_ANALYTICS_DB_URL: url, GATEWAY_RELATIONAL_DB_URL: url })
  // PGlite creates its database at the first start: seconds of CPU, many more on a loaded machine
  const start = (extra: Record<string, string | undefined> = {}) => startGateway({ config, env: { ...env(), ...extra }, startTimeoutMs: 120_000 })
  const infer = (text: string) =>
    gateway!.post("/inference", { model_name: "dummy::echo_request_messages", input: { messages: [{ role: "user", content: text }] } })

  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-embedded-"))
    url = `pglite://${path.join(folder, "data")}`
  })

  afterAll(async () => {
    await gateway?.stop()
    fs.rmSync(folder, { recursive: true, force: true })
  })

  it("stores and reads back inferences and feedback in one folder for both databases, with pgvector", async () => {
    gateway = await start()
    const status = await gateway.get("/status")
    expect(status.body).toMatchObject({ observability: { backend: "postgres", vector_search: "pgvector" }, background_tasks: "pg-boss" })
    const answer = await infer("first")
    expect(answer.status).toBe(200)
    const feedback = await gateway.post("/feedback", { inference_id: answer.body.inference_id, metric_name: "liked", value: true })
    expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
    const stored = await waitForInference(gateway, answer.body.inference_id)
    expect(stored.function_name).toBe("gateway::default")
    expect(fs.readFileSync(path.join(folder, "data", "FORMAT"), "utf8")).toMatch(/^gateway-pglite 1/)
    expect(fs.readFileSync(path.join(folder, "data", "gateway.lock"), "utf8")).toMatch(new RegExp(`^${gateway.process.pid} \\d+`))
  }, 150_000)

  it("refuses a second gateway on the folder, naming the process that holds it", async () => {
    const second = await runGateway(["--config-file", path.join(gateway!.dir, "config.toml")], { env: { ...env(), GATEWAY_BIND_ADDRESS: "127.0.0.1:0" } })
    expect(second.code).toBe(1)
    expect(second.stderr).toContain(`is in use by process ${gateway!.process.pid}`)
  })

  it("lets a one-shot command reach the database through the gateway that holds it", async () => {
    const created = await runGateway(["--create-api-key"], { env: env() })
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout.trim()).toMatch(/^sk-gw-[a-z0-9]{12}-/)
  })

  it("keeps the rows stored before a SIGKILL, and the next gateway takes the dead one's lock over", async () => {
    const answer = await infer("before the kill")
    await waitForInference(gateway!, answer.body.inference_id)
    gateway!.process.kill("SIGKILL")
    await new Promise((resolve) => gateway!.process.once("exit", resolve))
    gateway = await start()
    const stored = await waitForInference(gateway, answer.body.inference_id)
    expect(stored.inference_id).toBe(answer.body.inference_id)
  }, 150_000)

  it("keeps them across a SIGTERM and a restart", async () => {
    const answer = await infer("before the stop")
    await waitForInference(gateway!, answer.body.inference_id)
    expect(await gateway!.stop()).toBe(0)
    expect(fs.existsSync(path.join(folder, "data", "gateway.lock"))).toBe(false)
    gateway = await start()
    expect((await waitForInference(gateway, answer.body.inference_id)).inference_id).toBe(answer.body.inference_id)
    const listed = await poll("the earlier inferences", async () => {
      const found = await gateway!.post("/v1/inferences/list_inferences", { function_name: "gateway::default", limit: 10 })
      return found.body.inferences.length >= 3 ? found.body.inferences : undefined
    })
    expect(listed.length).toBeGreaterThanOrEqual(3)
  }, 150_000)

  it("moves every row to a Postgres server with migrate-data, which a gateway on that server then reads", async () => {
    const answer = await infer("moved")
    await waitForInference(gateway!, answer.body.inference_id)
    // a DICL example, stored through the gateway's embedded server: a pgvector column there
    const port = fs.readFileSync(path.join(folder, "data", "gateway.lock"), "utf8").trim().split(/\s+/)[1]
    const embedded = await openStore("postgres", `postgres://postgres@127.0.0.1:${port}/postgres`)
    const example = {
      id: "0196b5c0-0000-7000-8000-000000000001",
      functionName: "f",
      variantName: "dicl",
      input: { messages: [{ role: "user", content: "two plus two" }] },
      output: [{ type: "text", text: "four" }],
      embedding: [0.6, 0.8, 0],
      embeddingModel: "small",
      createdAt: Date.now()
    }
    try {
      expect(await run(embedded.store.dicl.vectorSearch)).toBe("pgvector")
      await run(embedded.store.dicl.write("default", "f", "dicl", [example], "replace"))
    } finally {
      await embedded.close()
    }
    const target = await freshDatabase("postgres")
    try {
      const moved = await runGateway(["migrate-data", "--from", url, "--to", target.url], { timeoutMs: 60_000 })
      expect(moved.code, moved.stderr).toBe(0)
      expect(moved.stdout).toMatch(/^chat_inference: [1-9]\d* rows$/m)
      expect(moved.stdout).toMatch(/^api_keys: 1 rows$/m)
      // the example, on whichever column type the server has (float arrays without pgvector)
      const onTarget = await openStore("postgres", target.url)
      try {
        const nearest = await run(onTarget.store.dicl.nearest("default", { functionName: "f", variantName: "dicl", embedding: [0.6, 0.8, 0], k: 1 }))
        expect(nearest.map((neighbor) => neighbor.output)).toEqual([[{ type: "text", text: "four" }]])
        expect(nearest[0].distance).toBeCloseTo(0, 5)
      } finally {
        await onTarget.close()
      }
      const onServer = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: target.url, GATEWAY_RELATIONAL_DB_URL: target.url } })
      try {
        expect((await waitForInference(onServer, answer.body.inference_id)).inference_id).toBe(answer.body.inference_id)
      } finally {
        await onServer.stop()
      }
      const again = await runGateway(["migrate-data", "--from", url, "--to", target.url], { timeoutMs: 60_000 })
      expect(again.code).toBe(1)
      expect(again.stderr).toMatch(/already holds rows/)
    } finally {
      await target.drop()
    }
  }, 120_000)

  it("refuses workers > 1, naming why", async () => {
    const refused = await runGateway(["--config-file", path.join(gateway!.dir, "config.toml"), "--workers", "2"], { env: env() })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/workers = 2 with an embedded database/)
  })

  it("refuses a folder of another format", async () => {
    const other = path.join(folder, "other")
    fs.mkdirSync(other)
    fs.writeFileSync(path.join(other, "FORMAT"), "gateway-pglite 0\n")
    const refused = await runGateway(["--create-api-key"], { env: { GATEWAY_RELATIONAL_DB_URL: `pglite://${other}` } })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/holds an embedded database of another format \("gateway-pglite 0"/)
  })
})
