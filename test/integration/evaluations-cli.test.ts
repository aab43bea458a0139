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

  it("exits 2 on a usage error, naming the flags at fault (not the request's fields)", async () => {
    const usageError = async (args: ReadonlyArray<string>) => {
      const result = await evaluate(args)
      expect(result.code, result.stderr).toBe(2)
      // outside the values quoted from the command line
      expect(result.stderr.replace(/"[^"]*"/g, "")).not.toMatch(/\b(function_name|evaluator_names|evaluation_name|dataset_name|datapoint_ids|variant_name|max_datapoints|adaptive_stopping_precision)\b/)
      return result.stderr
    }
    expect(await usageError(["--function-name", "greet", "--evaluator-names", "nope", "--dataset-name", "greetings"]))
      .toContain(`--evaluator-names: unknown evaluator "nope" of function "greet"`)
    expect(await usageError(["--function-name", "greet", "--dataset-name", "greetings", "--cutoffs", "exact=high"])).toContain("--cutoffs")
    expect(await usageError(["--function-name", "greet", "--dataset-name", "greetings", "--cutoffs", "nope=0.5"]))
      .toContain("--cutoffs nope: not one of the run's evaluators")
    for (const args of [["--function-name", "greet"], ["--function-name", "greet", "--dataset-name", "greetings", "--datapoint-ids", "0190f3a1-0000-7000-8000-000000000000"]]) {
      expect(await usageError(args)).toContain("--dataset-name or --datapoint-ids: give exactly one of them")
    }
    expect(await usageError(["--dataset-name", "greetings"])).toContain("--function-name or --evaluation-name: one of them is required")
    // the name the user gave is quoted as given, even when it reads like a field
    expect(await usageError(["--function-name", "greet", "--dataset-name", "dataset_name!"]))
      .toContain(`--dataset-name: "dataset_name!" is not a dataset name (1 to 128 characters`)
    expect(await usageError(["--function-name", "greet", "--variant-name", "nope", "--dataset-name", "greetings"]))
      .toContain(`--variant-name: unknown variant "nope" of function "greet"`)
    expect(await usageError(["--function-name", "greet", "--dataset-name", "no_such_dataset"]))
      .toContain(`--dataset-name: no dataset "no_such_dataset"`)
  })

  it("exits 1 naming the variable when no database is configured", async () => {
    const result = await runGateway(["evaluate", "--config-file", path.join(gateway.dir, "config.toml"), "--function-name", "greet", "--dataset-name", "greetings"], {
      env: { GATEWAY_ANALYTICS_DB_URL: undefined }
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_ANALYTICS_DB_URL")
  })
})
