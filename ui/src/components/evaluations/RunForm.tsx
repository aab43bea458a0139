/**
 * "Run an evaluation": a function, the variants to compare (one run each), a dataset holding
 * datapoints of the function, its evaluators and the concurrency; then each run's progress as
 * its events arrive, and links to the runs and to their comparison.
 */
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, useId, useState } from "react"
import { Link } from "react-router"
import type { DatasetsResponse } from "../../../../src/api/datasets.ts"
import { maxConcurrency } from "../../../../src/api/evaluationLimits.ts"
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { api } from "../../api.ts"
import { Badge, Button, Card, Checklist, evaluatorItem, Field, SelectField, shortId } from "../ui.tsx"
import { comparisonPath, type LaunchedRun, useLaunchedRuns } from "./launch.ts"
import { meanText } from "./scores.tsx"

const statusTone = { starting: "neutral", running: "warn", done: "good", error: "bad", detached: "neutral" } as const

const RunProgress = (props: { run: LaunchedRun }) => {
  const id = useId()
  const { run } = props
  const counts = run.total === undefined
    ? "starting…"
    : `${run.completed} of ${run.total} datapoints${run.failed > 0 ? `, ${run.failed} failed` : ""}`
  return (
    <li className="launched-run">
      <label htmlFor={id}>
        <strong>{run.variantName}</strong>: {counts}
      </label>
      <progress id={id} max={run.total ?? 1} value={run.total === undefined ? undefined : run.completed} />
      <span className="launched-run-status">
        <Badge tone={statusTone[run.status]}>{run.status === "done" ? run.summary?.status ?? "done" : run.status}</Badge>
        {run.runId !== undefined && <Link to={comparisonPath([run.runId])}>run {shortId(run.runId)}</Link>}
        {run.summary !== undefined && Object.entries(run.summary.summary).map(([evaluator, summary]) => (
          <span key={evaluator} className="muted">{`${evaluator} ${meanText(summary)}`}</span>
        ))}
      </span>
      {run.error !== undefined && <p role="alert" className="notice error">{run.error}</p>}
    </li>
  )
}

const Progress = (props: { runs: ReadonlyArray<LaunchedRun>; running: boolean }) => {
  const runIds = props.runs.flatMap((run) => run.runId === undefined ? [] : [run.runId])
  const done = props.runs.filter((run) => run.status === "done").length
  return (
    <section aria-label="Progress of the runs" className="launched-runs">
      <h3>Progress</h3>
      <ul className="plain">
        {props.runs.map((run) => <RunProgress key={run.variantName} run={run} />)}
      </ul>
      <p role="status">
        {props.running ? `Running: ${done} of ${props.runs.length} runs finished.` : `Finished: ${done} of ${props.runs.length} runs completed.`}
      </p>
      {!props.running && runIds.length > 1 && <Link className="button primary" to={comparisonPath(runIds)}>Compare these runs</Link>}
    </section>
  )
}

export const RunForm = (props: { config: UiConfig; onRunEnded: () => void }) => {
  const datasets = useQuery({ queryKey: ["datasets"], queryFn: () => api<typeof DatasetsResponse.Type>("/v1/datasets") })
  const functions = props.config.functions.filter((fn) => !fn.builtin && fn.variants.length > 0)
  const [functionName, setFunctionName] = useState("")
  const [variants, setVariants] = useState<ReadonlyArray<string>>([])
  const [datasetName, setDatasetName] = useState("")
  const [evaluators, setEvaluators] = useState<ReadonlyArray<string>>([])
  const [concurrency, setConcurrency] = useState("10")
  const { runs, running, start } = useLaunchedRuns(props.onRunEnded)

  const fn = functions.find((candidate) => candidate.name === functionName)
  const datasetOptions = (datasets.data?.datasets ?? []).flatMap((dataset) => {
    const count = dataset.functions.find((entry) => entry.function_name === functionName)?.datapoint_count ?? 0
    return count > 0 ? [{ value: dataset.name, label: `${dataset.name} (${count} datapoints)` }] : []
  })

  const chooseFunction = (name: string) => {
    setFunctionName(name)
    setVariants([])
    setDatasetName("")
    // every evaluator by default, as the gateway does when none is named
    setEvaluators(functions.find((candidate) => candidate.name === name)?.evaluators.map((evaluator) => evaluator.name) ?? [])
  }
  const ready = fn !== undefined && variants.length > 0 && datasetName !== "" && evaluators.length > 0 && !running
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!ready) return
    // in the function's order, whatever order they were checked in
    const chosen = fn.variants.map((variant) => variant.name).filter((name) => variants.includes(name))
    start(chosen, (variantName) => ({
      function_name: functionName,
      variant_name: variantName,
      dataset_name: datasetName,
      evaluator_names: evaluators,
      concurrency: Number(concurrency)
    }))
  }

  return (
    <Card title="Run an evaluation">
      <p className="muted">
        Each checked variant runs on every datapoint of the function in the dataset, and each output is scored by the evaluators (stored as
        inferences and feedback). Check two or more variants to compare them: one run each, side by side.
      </p>
      <form onSubmit={submit} aria-label="Run an evaluation">
        <div className="row">
          <SelectField label="Function" value={functionName} onChange={chooseFunction} empty="(choose a function)" options={functions.map((candidate) => candidate.name)} />
          <SelectField
            label="Dataset"
            value={datasetName}
            onChange={setDatasetName}
            empty="(choose a dataset)"
            options={datasetOptions}
            hint={datasets.isError ? "the datasets could not be listed" : fn !== undefined && datasetOptions.length === 0 ? "no dataset holds datapoints of this function" : undefined}
          />
          <Field label="Concurrency" hint={`inferences at once, 1 to ${maxConcurrency}`}>
            {(id) => (
              <input id={id} type="number" min={1} max={maxConcurrency} required value={concurrency} onChange={(event) => setConcurrency(event.target.value)} />
            )}
          </Field>
        </div>
        {fn !== undefined && (
          <>
            <Checklist
              legend="Variants (one run each)"
              items={fn.variants.map((variant) => ({
                value: variant.name,
                label: `${variant.name} (${variant.type}${variant.model === "" ? "" : `, ${variant.model}`})`
              }))}
              chosen={variants}
              onChange={setVariants}
            />
            <Checklist
              legend="Evaluators"
              items={fn.evaluators.map(evaluatorItem)}
              chosen={evaluators}
              onChange={setEvaluators}
              empty={`The function has no evaluators: add some under [functions.${fn.name}.evaluators].`}
            />
          </>
        )}
        <Button type="submit" kind="primary" disabled={!ready}>
          {running ? "Running…" : variants.length > 1 ? `Run ${variants.length} evaluations` : "Run the evaluation"}
        </Button>
      </form>
      {runs.length > 0 && <Progress runs={runs} running={running} />}
    </Card>
  )
}
