/**
 * A model's answer cannot forge a log line (issue 33): text a provider sends that reaches the
 * log (here a provider's error, quoted by the warning that ends a GEPA task whose every inference
 * failed) holds a line break followed by a fake entry, ANSI escapes, C1 controls and the Unicode
 * line separators. Over HTTP against a real gateway on Postgres, in both log formats: the
 * gateway's stderr has no line that does not belong to an entry, and no raw control character.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"
import { poll } from "../support/observability.ts"

const fakeEntry = "[12:00:00.000] ERROR (#1): forged entry"
const hostile = `task is down\n${fakeEntry}\r\x1b[2K\x1b[31mred\u2028\u2029\u0085\u009b2J\x07 end`
/** raw in a log, any of these could end a line or drive the terminal it is read on (line feeds are checked apart) */
const rawControl = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/

describe.each(["pretty", "json"] as const)("a provider's answer reaching the log, --log-format %s", (format) => {
  let database: TestDatabase
  let fake: GepaFakeModels
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startGepaFakeModels()])
    gateway = await startGateway({
      config: gepaConfig(fake.apiBase),
      files: gepaFiles,
      args: ["--config-file", "config.toml", "--log-format", format],
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    const created = await gateway.post("/v1/datasets/words/datapoints", { datapoints: wordDatapoints(["apple", "banana"]) })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  it("is escaped inside one entry: no forged line, no raw control character", async () => {
    fake.failing.add("task")
    fake.failingMessage = hostile
    const launched = await gateway.post("/v1/optimization/gepa", {
      function_name: "echo",
      analysis_model: "analyst",
      mutation_model: "mutator",
      dataset_name: "words",
      evaluators: ["exact"],
      initial_variants: ["base"],
      max_iterations: 1
    })
    expect(launched.status, JSON.stringify(launched.body)).toBe(200)
    const taskId = launched.body.task_id
    const ended = await poll("the GEPA task to end", async () => {
      const answer = await gateway.get(`/v1/optimization/gepa/${taskId}`)
      return answer.body.status === "pending" ? undefined : answer.body
    }, { timeoutMs: 30_000, intervalMs: 250 })
    // the API answers the provider's text as it was (JSON escapes it)
    expect(ended.status).toBe("error")
    expect(ended.error).toContain(hostile)
    const warned = `gepa: task ${taskId} ends`
    await poll("the task's warning in the log", async () => (gateway.log().includes(warned) ? true : undefined), { timeoutMs: 10_000, intervalMs: 100 })

    const log = gateway.log()
    expect(log).not.toMatch(rawControl)
    const lines = log.split("\n").filter((line) => line !== "")
    expect(lines.filter((line) => line.includes(fakeEntry))).toHaveLength(1)
    if (format === "pretty") {
      // an entry's first line, or a line indented under it
      for (const line of lines) expect(line).toMatch(/^(\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+ \(#\d+\)| {2})/)
      const warning = lines.find((line) => line.includes(warned))!
      expect(warning).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(#\d+\): gepa: task /)
      expect(warning).toContain(`task is down\\n${fakeEntry}\\r\\x1b[2K\\x1b[31mred\\u2028\\u2029\\x85\\x9b2J\\x07 end`)
    } else {
      // one JSON object per line, the text in it as the provider sent it
      const entries = lines.map((line) => JSON.parse(line))
      const warning = entries.find((entry) => String(entry.message).includes(warned))
      expect(warning.level).toBe("WARN")
      expect(warning.message).toContain(hostile)
    }
    // and the gateway goes on answering
    expect((await gateway.get("/status")).status).toBe(200)
  })
})
