/**
 * TensorZero's evaluation runs as this gateway's run records (src/tensorzeroImport/evaluationRuns.ts):
 * the results are the run's tagged inferences of its function, each with the latest score per
 * evaluator, and the summary is computed from them.
 */
import { describe, expect, it } from "vitest"
import type { StoredFeedback, StoredInference } from "../../src/analytics/records.ts"
import { evaluationRunOf } from "../../src/tensorzeroImport/evaluationRuns.ts"

const runId = "0192e7a4-0000-7000-8000-000000000001"
const metric = (evaluator: string) => `gateway::evaluation_name::haiku_eval::evaluator_name::${evaluator}`

const inference = (id: string, datapointId: string | undefined, functionName = "write_haiku"): StoredInference => ({
  id,
  workspace: "default",
  functionName,
  functionType: "chat",
  variantName: "v2",
  episodeId: id,
  input: {},
  output: [],
  inferenceParams: {},
  processingTimeMs: 1,
  tags: { "gateway::evaluation_run_id": runId, ...(datapointId === undefined ? {} : { "gateway::datapoint_id": datapointId }) },
  timestamp: 1000
})

const score = (id: string, targetId: string, evaluator: string, value: boolean | number, timestamp: number): StoredFeedback => ({
  id,
  workspace: "default",
  kind: typeof value === "boolean" ? "boolean" : "float",
  metricName: metric(evaluator),
  targetType: "inference",
  targetId,
  value,
  tags: {},
  timestamp
})

describe("evaluation runs from TensorZero", () => {
  it("keeps the latest score per inference and evaluator, and sums them up", () => {
    const { run, results } = evaluationRunOf(
      {
        runId,
        evaluationName: "haiku_eval",
        functionName: "write_haiku",
        functionType: "chat",
        datasetName: "haikus",
        variantNames: ["v2"],
        metrics: [{ name: metric("exact"), evaluator_name: "exact" }, { name: metric("judge"), evaluator_name: "judge" }],
        createdAt: 100,
        updatedAt: 900
      },
      [inference("a", "dp-1"), inference("b", "dp-2"), inference("judge-call", undefined, "gateway::llm_judge::haiku_eval::judge")],
      [
        score("f1", "a", "exact", true, 10),
        // a person's correction, later than the judge's score
        score("f2", "a", "exact", false, 20),
        score("f3", "b", "exact", true, 10),
        score("f4", "a", "judge", 0.5, 10),
        // a score of another evaluation
        { ...score("f5", "a", "exact", true, 30), metricName: "gateway::evaluation_name::other_eval::evaluator_name::exact" }
      ]
    )
    expect(results).toEqual([
      { runId, datapointId: "dp-1", inferenceId: "a", scores: { exact: false, judge: 0.5 }, evaluatorErrors: {}, timestamp: 1000 },
      { runId, datapointId: "dp-2", inferenceId: "b", scores: { exact: true }, evaluatorErrors: {}, timestamp: 1000 }
    ])
    expect(run).toMatchObject({
      id: runId,
      variantName: "v2",
      datasetName: "haikus",
      evaluationName: "haiku_eval",
      evaluatorNames: ["exact", "judge"],
      datapointCount: 2,
      completed: 2,
      status: "completed",
      startedAt: 100,
      finishedAt: 900
    })
    expect(run.summary.exact).toMatchObject({ count: 2, mean: 0.5, errors: 0 })
    expect(run.summary.judge).toMatchObject({ count: 1, mean: 0.5 })
  })
})
