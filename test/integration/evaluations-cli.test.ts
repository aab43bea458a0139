/**
 * `gateway evaluate` as a CI pipeline runs it: a summary table (or JSON Lines) on stdout,
 * progress on stderr, exit 0 when every cutoff is met, 1 when one is missed, 2 on a usage
 * error; the run it makes is stored and readable over HTTP like any other.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { evaluationsConfig, evaluationsConfigFiles, greetDatapoint, judgeReply } from "../support/evaluationsConfig.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"

describe("gateway evaluate", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  let judge: FakeOpenAi

  const evaluate = (args: ReadonlyArray<string>) =>
    runGateway(["evaluate", "--config-file", path.join(gateway.dir, "config.toml"), ...args], {
      env: { GATEWAY_ANALYTICS_DB_URL: database.url },
      timeoutMs: 30_000
    })

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    judge = await startFakeOpenAi()
    judge.fallback = judgeReply
    gateway = await startGateway({ config: evaluationsConfig(judge), files: evaluationsConfigFiles, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    const created = await gateway.post("/v1/datasets/greetings/datapoints", {
      datapoints: [greetDatapoint("hi"), greetDatapoint("hello"), greetDatapoint("hey", "Something else")]
    })
    expect(created.status).toBe(200)
  })

  afterAll(async () => {
    await gateway?.stop()
    await judge?.close()
    await database?.drop()
  })

  it("prints progress and a summary table, exits 0 when the cutoffs are met, and stores the run", async () => {
    const result = await evaluate(["--function-name", "greet", "--evaluator-names", "exact,greets", "--dataset-name", "greetings", "--variant-name", "fixed", "--cutoffs", "exact=0.6"])
    expect(result.code, result.stderr).toBe(0)
    // not a terminal: plain progress lines
    expect(result.stderr).toMatch(/evaluation run [0-9a-f-]{36}: 3 datapoints, variant fixed/)
    expect(result.stderr).toContain("3/3 datapoints")
    const lines = result.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/function greet, variant fixed, 3\/3 datapoints, 0 inference errors/)
    expect(lines[1].split(/\s+/)).toEqual(["evaluator", "mean", "stderr", "ci95", "count", "errors", "cutoff"])
    expect(lines.find((line) => line.startsWith("exact "))!.split(/\s{2,}/)).toEqual(["exact", "0.6667", "0.3333", "0.6533", "3", "0", "0.6 met"])
    expect(lines.find((line) => line.startsWith("greets "))!.split(/\s{2,}/).slice(0, 2)).toEqual(["greets", "1.0000"])

    const runId = /evaluation run ([0-9a-f-]{36})/.exec(result.stderr)![1]
    const read = await gateway.get(`/v1/evaluations/runs/${runId}`)
    expect(read.status).toBe(200)
    expect(read.body.run).toMatchObject({ status: "completed", completed: 3, variant_name: "fixed", summary: { exact: { cutoff: 0.6, cutoff_met: true } } })
  })

  it("exits 1 when a cutoff is missed, naming it", async () => {
    const result = await evaluate(["--evaluation-name", "greeting", "--dataset-name", "greetings", "--cutoffs", "exact=0.9"])
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toContain("cutoff missed: exact")
    expect(result.stdout).toMatch(/exact\s+0\.6667.*0\.9 MISSED/)
  })

  it("writes one JSON line per result, then the summary, with --format jsonl", async () => {
    const result = await evaluate(["--function-name", "greet", "--evaluator-names", "mentions_dummy", "--dataset-name", "greetings", "--format", "jsonl", "--max-datapoints", "2"])
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(lines).toHaveLength(3)
    expect(lines.slice(0, 2).map((line) => line.scores.mentions_dummy)).toEqual([true, true])
    expect(lines[2].summary).toMatchObject({ datapoint_count: 2, completed: 2, summary: { mentions_dummy: { count: 2, mean: 1 } } })
  })

  it("exits 2 on a usage error", async () => {
    const unknownEvaluator = await evaluate(["--function-name", "greet", "--evaluator-names", "nope", "--dataset-name", "greetings"])
    expect(unknownEvaluator.code).toBe(2)
    expect(unknownEvaluator.stderr).toContain(`unknown evaluator "nope"`)
    const badCutoff = await evaluate(["--function-name", "greet", "--dataset-name", "greetings", "--cutoffs", "exact=high"])
    expect(badCutoff.code).toBe(2)
    expect(badCutoff.stderr).toContain("--cutoffs")
    const neither = await evaluate(["--function-name", "greet"])
    expect(neither.code).toBe(2)
    expect(neither.stderr).toContain("dataset_name or datapoint_ids")
  })

  it("exits 1 naming the variable when no database is configured", async () => {
    const result = await runGateway(["evaluate", "--config-file", path.join(gateway.dir, "config.toml"), "--function-name", "greet", "--dataset-name", "greetings"], {
      env: { GATEWAY_ANALYTICS_DB_URL: undefined }
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_ANALYTICS_DB_URL")
  })
})
