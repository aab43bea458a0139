/**
 * Inference evaluation runs over real HTTP, against a real gateway on ClickHouse and on
 * Postgres: the SSE stream of a run (start, a result per datapoint, the summary), every
 * evaluator type scored on dummy models and on a fake judge, what is stored (the inferences
 * tagged with the run, the scores as feedback, the judges' inferences, the run read back),
 * adaptive stopping, a client leaving mid-run, and the errors of a request that cannot run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import {
  dummyHelloText,
  evaluationsConfig,
  evaluationsConfigFiles,
  extractDatapoint,
  greetDatapoint,
  judgeReply,
  weatherDatapoint
} from "../support/evaluationsConfig.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, getInferences, listInferences, poll, uuidV7Pattern, waitForFeedback } from "../support/observability.ts"

interface RunEvents {
  readonly status: number
  readonly events: Array<any>
  readonly body?: any
}

/** POSTs a run and reads its events (`event: <type>` then `data: <json>`) to the end */
const runEvaluation = async (gateway: RunningGateway, body: unknown): Promise<RunEvents> => {
  const response = await fetch(`${gateway.url}/v1/evaluations/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    return { status: response.status, events: [], body: JSON.parse(text) }
  }
  const events = text.split("\n\n").filter((block) => block !== "").map((block) => {
    const [eventLine, dataLine] = block.split("\n")
    const data = JSON.parse(dataLine.slice("data: ".length))
    expect(eventLine).toBe(`event: ${data.type}`)
    return data
  })
  return { status: response.status, events }
}

const summaryOf = (run: RunEvents) => {
  const summary = run.events.find((event) => event.type === "summary")
  if (summary === undefined) throw new Error(`no summary: ${run.status} ${JSON.stringify(run.body ?? run.events)}`)
  return summary
}
const resultsOf = (run: RunEvents) => run.events.filter((event) => event.type === "result")

describe.each(backends)("evaluation runs over HTTP on %s", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  let judge: FakeOpenAi

  const create = async (dataset: string, datapoints: ReadonlyArray<unknown>): Promise<Array<string>> => {
    const answer = await gateway.post(`/v1/datasets/${dataset}/datapoints`, { datapoints })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.ids
  }

  beforeAll(async () => {
    database = await freshDatabase(backend)
    judge = await startFakeOpenAi()
    judge.fallback = judgeReply
    gateway = await startGateway({ config: evaluationsConfig(judge), files: evaluationsConfigFiles, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    await create("greetings", [greetDatapoint("hi"), greetDatapoint("hello"), greetDatapoint("hey", "Something else")])
    await create("weather", [weatherDatapoint("Paris?"), weatherDatapoint("Rome?")])
    await create("extraction", [extractDatapoint("a", "Hello"), extractDatapoint("b", "42")])
  })

  afterAll(async () => {
    await gateway?.stop()
    await judge?.close()
    await database?.drop()
  })

  it("streams a start event, one result per datapoint and a summary, and stores the run, its inferences and scores", async () => {
    const run = await runEvaluation(gateway, {
      function_name: "greet",
      evaluator_names: ["exact", "mentions_dummy", "greets", "quality"],
      dataset_name: "greetings",
      variant_name: "fixed",
      concurrency: 2
    })
    expect(run.status).toBe(200)
    const [start] = run.events
    expect(start).toMatchObject({ type: "start", datapoint_count: 3, variant_name: "fixed" })
    expect(start.run_id).toMatch(uuidV7Pattern)
    const results = resultsOf(run)
    expect(results).toHaveLength(3)
    for (const result of results) {
      expect(result.inference_id).toMatch(uuidV7Pattern)
      expect(result.evaluator_errors).toEqual({})
      expect(result.scores.mentions_dummy).toBe(true)
      expect(result.scores.greets).toBe(true)
      expect(result.scores.quality).toBe(0.75)
    }
    expect(results.map((result) => result.scores.exact).sort()).toEqual([false, true, true])

    const summary = summaryOf(run)
    expect(summary).toMatchObject({ type: "summary", run_id: start.run_id, status: "completed", completed: 3, errors: 0, datapoint_count: 3 })
    expect(summary.summary.exact.count).toBe(3)
    expect(summary.summary.exact.mean).toBeCloseTo(2 / 3, 10)
    // two ones and a zero: the sample standard deviation is sqrt(1/3), its standard error sqrt(1/9)
    expect(summary.summary.exact.stderr).toBeCloseTo(1 / 3, 10)
    expect(summary.summary.exact.ci_half_width).toBeCloseTo(1.96 / 3, 10)
    expect(summary.summary.quality).toMatchObject({ count: 3, mean: 0.75, stderr: 0, errors: 0 })

    // read back, without recomputation
    const read = await gateway.get(`/v1/evaluations/runs/${start.run_id}`)
    expect(read.status).toBe(200)
    const { type: _, ...finalRun } = summary
    expect(read.body.run).toEqual(finalRun)
    expect(read.body.results.map((result: any) => result.datapoint_id)).toEqual(results.map((result) => result.datapoint_id).sort())
    const listed = await gateway.get("/v1/evaluations/runs?function_name=greet")
    expect(listed.body.runs.map((listedRun: any) => listedRun.run_id)).toContain(start.run_id)

    // every inference stored, tagged with the run and its datapoint, its scores stored as feedback
    const inferenceIds = results.map((result) => result.inference_id)
    const stored = await poll("the run's inferences", async () => {
      const found = await getInferences(gateway, inferenceIds)
      return found.length === 3 ? found : undefined
    })
    for (const inference of stored) {
      expect(inference.variant_name).toBe("fixed")
      expect(inference.tags["gateway::evaluation_run_id"]).toBe(start.run_id)
      expect(inference.tags["gateway::dataset_name"]).toBe("greetings")
      const result = results.find((candidate) => candidate.inference_id === inference.inference_id)
      expect(inference.tags["gateway::datapoint_id"]).toBe(result.datapoint_id)
    }
    const feedback = await waitForFeedback(gateway, inferenceIds[0], (rows) => rows.length >= 4)
    const byMetric = Object.fromEntries(feedback.map((row: any) => [row.metric_name, row]))
    expect(byMetric["gateway::function_name::greet::evaluator_name::quality"].value).toBe(0.75)
    expect(byMetric["gateway::function_name::greet::evaluator_name::mentions_dummy"].value).toBe(true)
    const judged = byMetric["gateway::function_name::greet::evaluator_name::greets"]
    expect(judged.tags["gateway::evaluation_run_id"]).toBe(start.run_id)

    // an evaluator's metric filters inferences like any metric
    const missed = results.find((result) => result.scores.exact === false)
    const filtered = await poll("the inference the exact match missed", async () => {
      const found = await listInferences(gateway, {
        function_name: "greet",
        filters: { type: "boolean_metric", metric_name: "gateway::function_name::greet::evaluator_name::exact", value: false }
      })
      return found.length > 0 ? found : undefined
    })
    expect(filtered.map((inference: any) => inference.inference_id)).toEqual([missed.inference_id])

    // the judges' inferences are stored too, tagged with what they judged
    const judgeInferences = await poll("the judges' inferences", async () => {
      const found = await listInferences(gateway, {
        function_name: "gateway::llm_judge::greet::greets",
        filters: { type: "tag", key: "gateway::evaluation_run_id", value: start.run_id, comparison_operator: "=" }
      })
      return found.length === 3 ? found : undefined
    })
    expect(judgeInferences.map((inference: any) => inference.tags["gateway::judged_inference_id"]).sort()).toEqual([...inferenceIds].sort())
    expect(judged.tags["gateway::evaluator_inference_id"]).toMatch(uuidV7Pattern)
    // the judge saw its instructions as written, and the output it judged
    const judgeCall = judge.requests.find((request) => JSON.stringify(request.body.messages).includes("greets the user"))!
    expect(JSON.stringify(judgeCall.body.messages)).toContain("{{ not a template }}")
    expect(JSON.stringify(judgeCall.body.messages)).toContain(dummyHelloText)
  })

  it("scores tool use, json exact matches, and a configured evaluation with its cutoffs", async () => {
    const weather = await runEvaluation(gateway, { function_name: "weather", dataset_name: "weather" })
    expect(summaryOf(weather).summary).toMatchObject({
      uses_temperature: { count: 2, mean: 1 },
      uses_both: { count: 2, mean: 0 },
      no_tools: { count: 2, mean: 0 }
    })
    const extract = await runEvaluation(gateway, { function_name: "extract", dataset_name: "extraction" })
    expect(summaryOf(extract).summary.exact).toMatchObject({ count: 2, mean: 0.5 })

    const evaluation = await runEvaluation(gateway, { evaluation_name: "greeting", dataset_name: "greetings", cutoffs: { polite: 0.9 } })
    const summary = summaryOf(evaluation)
    expect(summary.evaluation_name).toBe("greeting")
    // the mean is accumulated in the order the datapoints finish: equal to 2/3 up to the last bit
    expect(summary.summary.exact).toMatchObject({ cutoff: 0.5, cutoff_met: true })
    expect(summary.summary.exact.mean).toBeCloseTo(2 / 3, 12)
    expect(summary.summary.polite).toMatchObject({ mean: 1, cutoff: 0.9, cutoff_met: true })
    const [result] = resultsOf(evaluation)
    const [inference] = await poll("an inference of the evaluation", async () => {
      const found = await getInferences(gateway, [result.inference_id])
      return found.length === 1 ? found : undefined
    })
    expect(inference.tags["gateway::evaluation_name"]).toBe("greeting")
    const feedback = await waitForFeedback(gateway, result.inference_id, (rows) => rows.length >= 2)
    expect(feedback.map((row: any) => row.metric_name)).toContain("gateway::evaluation_name::greeting::evaluator_name::polite")
  })

  it("counts a failing judge, a judge that cannot apply and a failing inference as errors, and finishes the run", async () => {
    const [withoutReference] = await create("no_reference", [{ ...greetDatapoint("hi"), output: undefined }])
    const judged = await runEvaluation(gateway, { function_name: "greet", evaluator_names: ["greets", "broken"], datapoint_ids: [withoutReference] })
    const [result] = resultsOf(judged)
    // the judge includes the reference output, and there is none: it does not apply
    expect(result.scores.greets).toBeNull()
    expect(result.evaluator_errors.broken).toMatch(/judge/)
    expect(summaryOf(judged).summary).toMatchObject({ greets: { count: 0, errors: 0 }, broken: { count: 0, errors: 1 } })

    const failing = await runEvaluation(gateway, { function_name: "greet", evaluator_names: ["exact"], dataset_name: "greetings", variant_name: "failing" })
    expect(resultsOf(failing)).toHaveLength(3)
    for (const failed of resultsOf(failing)) {
      expect(failed.inference_id).toBeNull()
      expect(failed.error).toMatch(/Error sending request to Dummy provider for model 'error'\./)
    }
    expect(summaryOf(failing)).toMatchObject({ status: "completed", completed: 3, errors: 3, summary: { exact: { count: 0, errors: 3 } } })
  })

  it("stops early once every named evaluator's confidence interval is narrow enough", async () => {
    await create("many", Array.from({ length: 30 }, (_, i) => greetDatapoint(`hi ${i}`)))
    const run = await runEvaluation(gateway, {
      function_name: "greet",
      evaluator_names: ["exact"],
      dataset_name: "many",
      concurrency: 1,
      adaptive_stopping_precision: { exact: 0.05 }
    })
    const summary = summaryOf(run)
    expect(summary.status).toBe("stopped_early")
    // every score is 1: the interval is 0 wide once the minimum of 10 scores is reached
    expect(summary.completed).toBe(10)
    expect(resultsOf(run)).toHaveLength(10)
    expect(summary.datapoint_count).toBe(30)
  })

  it("goes on with a run whose client left", async () => {
    await create("slow", Array.from({ length: 4 }, (_, i) => greetDatapoint(`slow ${i}`)))
    const controller = new AbortController()
    const response = await fetch(`${gateway.url}/v1/evaluations/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ function_name: "greet", evaluator_names: ["exact"], dataset_name: "slow", variant_name: "slow", concurrency: 1 }),
      signal: controller.signal
    })
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    const runId = JSON.parse(first.split("\n")[1].slice("data: ".length)).run_id
    controller.abort()
    const finished = await poll("the run to finish without its client", async () => {
      const read = await gateway.get(`/v1/evaluations/runs/${runId}`)
      return read.body.run?.status === "completed" ? read.body : undefined
    }, { timeoutMs: 15_000 })
    expect(finished.run.completed).toBe(4)
    expect(finished.results).toHaveLength(4)
    // and the gateway serves on
    expect((await gateway.get("/v1/evaluations/runs")).status).toBe(200)
  })

  it("refuses a run it cannot make, naming the field, before any event", async () => {
    const cases: ReadonlyArray<readonly [unknown, number, RegExp]> = [
      [{ function_name: "nope", dataset_name: "greetings" }, 404, /function_name: unknown function "nope"/],
      [{ function_name: "greet", evaluator_names: ["nope"], dataset_name: "greetings" }, 404, /evaluator_names\[0\]: unknown evaluator "nope"/],
      [{ evaluation_name: "nope", dataset_name: "greetings" }, 404, /evaluation_name: unknown evaluation "nope"/],
      [{ function_name: "greet", dataset_name: "greetings", variant_name: "nope" }, 404, /variant_name: unknown variant "nope"/],
      [{ function_name: "greet", dataset_name: "nothing_here" }, 404, /dataset_name: no dataset "nothing_here"/],
      [{ function_name: "greet", dataset_name: "weather" }, 400, /no live datapoints of function "greet"/],
      [{ function_name: "greet" }, 400, /dataset_name or datapoint_ids/],
      [{ function_name: "greet", dataset_name: "greetings", datapoint_ids: [] }, 400, /dataset_name or datapoint_ids/],
      [{ function_name: "greet", dataset_name: "greetings", concurrency: 0 }, 400, /concurrency/],
      [{ function_name: "greet", dataset_name: "greetings", cutoffs: { nope: 1 } }, 400, /cutoffs\.nope/],
      [{ function_name: "greet", datapoint_ids: ["0190b5c4-0000-7000-8000-000000000000"] }, 404, /not live datapoints/]
    ]
    for (const [body, status, message] of cases) {
      const answer = await runEvaluation(gateway, body)
      expect(answer.status, JSON.stringify(body)).toBe(status)
      expect(answer.body.error, JSON.stringify(body)).toMatch(message)
    }
    expect((await gateway.get("/v1/evaluations/runs/not-a-run")).status).toBe(404)
    expect((await gateway.get("/v1/evaluations/runs?limit=x")).status).toBe(400)
  })
})

describe("evaluation runs without a database", () => {
  it("answer 503 naming the variable", async () => {
    const judge = await startFakeOpenAi()
    const gateway = await startGateway({ config: evaluationsConfig(judge), files: evaluationsConfigFiles, env: { GATEWAY_ANALYTICS_DB_URL: undefined } })
    try {
      const answer = await runEvaluation(gateway, { function_name: "greet", dataset_name: "greetings" })
      expect(answer.status).toBe(503)
      expect(answer.body.error).toMatch(/GATEWAY_ANALYTICS_DB_URL/)
      expect((await gateway.get("/v1/evaluations/runs")).status).toBe(503)
    } finally {
      await gateway.stop()
      await judge.close()
    }
  })
})
