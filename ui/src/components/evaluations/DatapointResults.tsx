/**
 * The runs' results per datapoint, a page at a time: the datapoint's input, then each run's
 * output and scores side by side. Outputs are the runs' stored inferences
 * (`POST /v1/inferences/get_inferences`), asked again while some are not stored yet (the
 * gateway writes them in batches).
 */
import { useQuery } from "@tanstack/react-query"
import { useState } from "react"
import { Link } from "react-router"
import type { InferencesResponse } from "../../../../src/api/inferences.ts"
import type { UiStoredInference } from "../../../../src/api/uiInferences.ts"
import { api } from "../../api.ts"
import { InputView, OutputView } from "../inference/content.tsx"
import { Card, ErrorNotice, Pager, shortId, Table } from "../ui.tsx"
import { datapointRows, type DatapointRow, type ResultJson, type RunDetail, runLabel } from "./compare.ts"
import { ScoreBadge } from "./scores.tsx"

const pageSize = 20

const RunResult = (props: { detail: RunDetail; result: ResultJson | undefined; inference: UiStoredInference | undefined }) => {
  const { result, inference } = props
  if (result === undefined) return <span className="muted">not in this run</span>
  return (
    <div className="datapoint-output">
      {result.error !== undefined
        ? <p className="notice error">Inference failed: {result.error}</p>
        : inference !== undefined
        ? <OutputView inference={inference} />
        : <p className="muted">Output not stored yet…</p>}
      <div className="scores" aria-label={`Scores of ${runLabel(props.detail)}`} role="group">
        {props.detail.run.evaluator_names.map((evaluator) => (
          <ScoreBadge key={evaluator} evaluator={evaluator} score={result.scores[evaluator]} error={result.evaluator_errors[evaluator]} />
        ))}
      </div>
      {Object.entries(result.evaluator_errors).map(([evaluator, error]) => <p key={evaluator} className="muted">{evaluator} could not score: {error}</p>)}
      {result.inference_id !== null && <Link to={`/inferences/${result.inference_id}`}>inference {shortId(result.inference_id)}</Link>}
    </div>
  )
}

export const DatapointResults = (props: { details: ReadonlyArray<RunDetail> }) => {
  const { details } = props
  const [offset, setOffset] = useState(0)
  const rows = datapointRows(details)
  const shown = rows.slice(offset, offset + pageSize)
  const inferenceIds = shown.flatMap((row) => [...row.results.values()].flatMap((result) => result.inference_id === null ? [] : [result.inference_id]))
  const inferences = useQuery({
    queryKey: ["evaluation-outputs", inferenceIds],
    queryFn: () => api<InferencesResponse>("/v1/inferences/get_inferences", { body: { ids: inferenceIds } }),
    enabled: inferenceIds.length > 0,
    // a minute at most: an inference whose write failed is never stored
    refetchInterval: (current) =>
      (current.state.data?.inferences.length ?? 0) < inferenceIds.length && current.state.dataUpdateCount < 60 ? 1000 : false
  })
  const byId = new Map((inferences.data?.inferences ?? []).map((inference) => [inference.inference_id, inference]))
  const datasetName = details[0].run.dataset_name
  const truncated = details.some((detail) => detail.results.length < detail.run.completed)
  const inputOf = (row: DatapointRow) => {
    for (const result of row.results.values()) {
      const inference = result.inference_id === null ? undefined : byId.get(result.inference_id)
      if (inference !== undefined) return <div className="datapoint-input"><InputView input={inference.input} /></div>
    }
    return <span className="muted">—</span>
  }
  return (
    <Card title="Datapoints">
      {truncated && <p className="muted">A run holds more results than are read at once: these are its first ones, by datapoint id.</p>}
      <ErrorNotice error={inferences.error} />
      <Table<DatapointRow>
        caption="Results per datapoint, one column per run"
        rows={shown}
        rowKey={(row) => row.datapointId}
        empty="No datapoint has a result yet."
        columns={[
          {
            header: "Datapoint",
            cell: (row) => datasetName === null
              ? <code title={row.datapointId}>{shortId(row.datapointId)}</code>
              : <Link className="mono" to={`/datasets/${encodeURIComponent(datasetName)}/datapoints/${row.datapointId}`}>{shortId(row.datapointId)}</Link>
          },
          { header: "Input", cell: inputOf },
          ...details.map((detail) => ({
            header: runLabel(detail),
            cell: (row: DatapointRow) => {
              const result = row.results.get(detail.run.run_id)
              return <RunResult detail={detail} result={result} inference={result?.inference_id == null ? undefined : byId.get(result.inference_id)} />
            }
          }))
        ]}
      />
      <Pager label="Pages of datapoints" offset={offset} limit={pageSize} count={shown.length} onChange={setOffset} />
    </Card>
  )
}
