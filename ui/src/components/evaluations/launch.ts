/**
 * The evaluation runs started from the form: `POST /v1/evaluations/run` answers one run of one
 * variant as Server-Sent Events, so comparing variants starts one run per variant, all at once,
 * and folds each run's events (start, a result per datapoint, the summary) into its progress.
 * Leaving the page stops listening, not the runs: the gateway finishes them and lists them.
 */
import { useCallback, useEffect, useRef, useState } from "react"
import type { EvaluationEvent, EvaluationRun, EvaluationRunRequest } from "../../../../src/api/evaluations.ts"
import { ApiError, events } from "../../api.ts"

export type EvaluationRunJson = typeof EvaluationRun.Type
type EvaluationEventJson = typeof EvaluationEvent.Type

export interface LaunchedRun {
  readonly variantName: string
  readonly status: "starting" | "running" | "done" | "error" | "detached"
  readonly runId?: string
  /** the datapoints the run set out to evaluate, once it started */
  readonly total?: number
  /** datapoints done, and those whose inference failed */
  readonly completed: number
  readonly failed: number
  /** the run as it ended */
  readonly summary?: EvaluationRunJson
  readonly error?: string
}

/** the run with one more event folded in */
export const foldEvent = (run: LaunchedRun, event: EvaluationEventJson): LaunchedRun => {
  switch (event.type) {
    case "start":
      return { ...run, status: "running", runId: event.run_id, total: event.datapoint_count }
    case "result":
      return { ...run, completed: run.completed + 1, failed: run.failed + (event.error === undefined ? 0 : 1) }
    case "summary":
      return {
        ...run,
        status: event.status === "failed" ? "error" : "done",
        summary: event,
        completed: event.completed,
        failed: event.errors,
        ...(event.failure !== undefined && { error: event.failure })
      }
    case "error":
      return { ...run, status: "error", error: event.error }
  }
}

/** The runs of the last submission, how to start them, and a call when each one ends (to refresh the list). */
export const useLaunchedRuns = (onEnded: () => void) => {
  const [runs, setRuns] = useState<ReadonlyArray<LaunchedRun>>([])
  const controller = useRef<AbortController | undefined>(undefined)
  const ended = useRef(onEnded)
  useEffect(() => {
    ended.current = onEnded
  }, [onEnded])

  const start = useCallback((variantNames: ReadonlyArray<string>, request: (variantName: string) => EvaluationRunRequest) => {
    controller.current?.abort()
    const abort = new AbortController()
    controller.current = abort
    setRuns(variantNames.map((variantName) => ({ variantName, status: "starting", completed: 0, failed: 0 })))
    const update = (variantName: string, change: (run: LaunchedRun) => LaunchedRun) =>
      setRuns((current) => current.map((run) => run.variantName === variantName ? change(run) : run))
    for (const variantName of variantNames) {
      void (async () => {
        try {
          for await (const event of events("/v1/evaluations/run", request(variantName), abort.signal)) {
            update(variantName, (run) => foldEvent(run, event as EvaluationEventJson))
          }
          // a stream that ends without a summary: the gateway went away mid-run
          update(variantName, (run) => run.status === "done" || run.status === "error" ? run : { ...run, status: "error", error: "the stream ended before the run did" })
        } catch (error) {
          if (abort.signal.aborted) update(variantName, (run) => run.status === "running" ? { ...run, status: "detached" } : run)
          else {
            const message = error instanceof ApiError ? `${error.status}: ${error.message}` : (error as Error).message
            update(variantName, (run) => ({ ...run, status: "error", error: message }))
          }
        }
        ended.current()
      })()
    }
  }, [])

  // leaving the page stops listening; the runs go on in the gateway
  useEffect(() => () => controller.current?.abort(), [])
  const running = runs.some((run) => run.status === "starting" || run.status === "running")
  return { runs, running, start }
}

/** the comparison page of runs: the first, the others as `compare` */
export const comparisonPath = (runIds: ReadonlyArray<string>) =>
  `/evaluations/runs/${encodeURIComponent(runIds[0])}${runIds.length > 1 ? `?compare=${runIds.slice(1).map(encodeURIComponent).join(",")}` : ""}`
