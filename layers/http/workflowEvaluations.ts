/**
 * The routes of workflow evaluation runs (under `/workflow_evaluation_run...` and
 * `/dynamic_evaluation_run...` alike): decode the body or the query, run the
 * WorkflowEvaluationService's operation in the caller's workspace, answer JSON.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import {
  CreateEpisodeRequest,
  CreateRunRequest,
  defaultEpisodesListed,
  defaultRunsListed,
  maxEpisodesListed,
  maxRunsListed
} from "../../src/api/workflowEvaluations.ts"
import { makeDecoder } from "../../src/decode.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { WorkflowEvaluationService } from "../../src/workflowEvaluations/service.ts"
import type { WorkflowEpisodeRecord, WorkflowMetricSummary, WorkflowRunRecord } from "../../src/workflowEvaluations/store.ts"
import { integerParam, queryParams } from "./query.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeCreateRun = makeDecoder(CreateRunRequest)
const decodeCreateEpisode = makeDecoder(CreateEpisodeRequest)

const maxBodyBytes = Effect.map(Configuration, (config) => config.gateway.maxRequestBodyBytes)

const runIdParam = Effect.map(HttpRouter.params, (params) => params.run_id ?? "")

const time = (ms: number) => new Date(ms).toISOString()

const runJson = (run: WorkflowRunRecord) => ({
  run_id: run.id,
  variants: run.variants,
  project_name: run.projectName ?? null,
  display_name: run.displayName ?? null,
  tags: run.tags,
  timestamp: time(run.timestamp)
})

const episodeJson = (episode: WorkflowEpisodeRecord) => ({
  episode_id: episode.id,
  run_id: episode.runId,
  task_name: episode.taskName ?? null,
  tags: episode.tags,
  timestamp: time(episode.timestamp)
})

const metricJson = (metric: WorkflowMetricSummary) => ({ metric_name: metric.metricName, count: metric.count, mean: metric.mean ?? null })

export const createRunHandler = (caller: Caller) => Effect.gen(function*() {
  const request = yield* readJsonBody(decodeCreateRun, yield* maxBodyBytes)
  const runId = yield* (yield* WorkflowEvaluationService).createRun(caller.workspace, request)
  return jsonResponse(JSON.stringify({ run_id: runId }))
})

export const createEpisodeHandler = (caller: Caller) => Effect.gen(function*() {
  const runId = yield* runIdParam
  const request = yield* readJsonBody(decodeCreateEpisode, yield* maxBodyBytes)
  const episodeId = yield* (yield* WorkflowEvaluationService).createEpisode(caller.workspace, runId, request)
  return jsonResponse(JSON.stringify({ episode_id: episodeId }))
})

export const getRunHandler = (caller: Caller) => Effect.gen(function*() {
  const runId = yield* runIdParam
  const query = yield* queryParams
  const limit = yield* integerParam(query, "limit", defaultEpisodesListed, 1, maxEpisodesListed)
  const offset = yield* integerParam(query, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
  const details = yield* (yield* WorkflowEvaluationService).getRun(caller.workspace, runId, { limit, offset })
  return jsonResponse(JSON.stringify({
    run: runJson(details.run),
    episodes: details.episodes.map(episodeJson),
    metrics: details.metrics.map(metricJson)
  }))
})

export const listRunsHandler = (caller: Caller) => Effect.gen(function*() {
  const query = yield* queryParams
  const limit = yield* integerParam(query, "limit", defaultRunsListed, 1, maxRunsListed)
  const offset = yield* integerParam(query, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
  const runs = yield* (yield* WorkflowEvaluationService).listRuns(caller.workspace, { projectName: query.get("project_name") ?? undefined, limit, offset })
  return jsonResponse(JSON.stringify({ runs: runs.map(runJson) }))
})
