/**
 * The form that launches a GEPA task (`POST /v1/optimization/gepa`): the function, its datasets,
 * how candidates are scored (evaluators of the function, or one of its evaluations), the two
 * models, the iterations, and the rest folded under "More settings" with the gateway's defaults.
 */
import { useMutation, useQuery } from "@tanstack/react-query"
import { type FormEvent, useId, useState } from "react"
import { useNavigate } from "react-router"
import type { DatasetsResponse } from "../../../../src/api/datasets.ts"
import type { LaunchGepaRequest, LaunchGepaResponse } from "../../../../src/api/gepa.ts"
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { api } from "../../api.ts"
import { Button, Card, CheckboxField, Checklist, Collapsible, ErrorNotice, evaluatorItem, Field, SelectField, TextField } from "../ui.tsx"
import { rememberTask } from "./launchedTasks.ts"

/** a text field offering the configured models, open to short-hands (`openai::gpt-4o`) */
const ModelField = (props: { label: string; value: string; onChange: (value: string) => void; listId: string; hint: string }) => (
  <Field label={props.label} hint={props.hint}>
    {(id) => <input id={id} list={props.listId} required value={props.value} onChange={(event) => props.onChange(event.target.value)} />}
  </Field>
)

/** an optional whole number: empty is left to the gateway's default */
const optionalInt = (text: string): number | undefined => text.trim() === "" ? undefined : Number(text)

export const GepaLaunchForm = (props: { config: UiConfig }) => {
  const navigate = useNavigate()
  const modelsId = useId()
  const datasets = useQuery({ queryKey: ["datasets"], queryFn: () => api<typeof DatasetsResponse.Type>("/v1/datasets") })
  const functions = props.config.functions.filter((fn) => !fn.builtin && fn.variants.some((variant) => variant.type === "chat_completion"))
  const [functionName, setFunctionName] = useState("")
  const [datasetMode, setDatasetMode] = useState<"split" | "pair">("split")
  const [datasetName, setDatasetName] = useState("")
  const [trainName, setTrainName] = useState("")
  const [validationName, setValidationName] = useState("")
  const [scoring, setScoring] = useState<"evaluators" | "evaluation">("evaluators")
  const [evaluators, setEvaluators] = useState<ReadonlyArray<string>>([])
  const [evaluationName, setEvaluationName] = useState("")
  const [analysisModel, setAnalysisModel] = useState("")
  const [mutationModel, setMutationModel] = useState("")
  const [maxIterations, setMaxIterations] = useState("3")
  const [initialVariants, setInitialVariants] = useState<ReadonlyArray<string>>([])
  const [batchSize, setBatchSize] = useState("")
  const [seed, setSeed] = useState("")
  const [maxConcurrency, setMaxConcurrency] = useState("")
  const [maxDatapoints, setMaxDatapoints] = useState("")
  const [variantPrefix, setVariantPrefix] = useState("")
  const [includeInference, setIncludeInference] = useState(true)

  const fn = functions.find((candidate) => candidate.name === functionName)
  const evaluations = props.config.evaluations.filter((evaluation) => evaluation.function_name === functionName)
  const datasetOptions = (datasets.data?.datasets ?? []).flatMap((dataset) => {
    const count = dataset.functions.find((entry) => entry.function_name === functionName)?.datapoint_count ?? 0
    return count > 0 ? [{ value: dataset.name, label: `${dataset.name} (${count} datapoints)` }] : []
  })

  const launch = useMutation({
    mutationFn: (request: LaunchGepaRequest) => api<typeof LaunchGepaResponse.Type>("/v1/optimization/gepa", { body: request }),
    onSuccess: ({ task_id }) => {
      rememberTask({ task_id, function_name: functionName, launched_at: Date.now() })
      void navigate(`/optimization/gepa/${task_id}`)
    }
  })

  const chooseFunction = (name: string) => {
    setFunctionName(name)
    setEvaluators([])
    setEvaluationName("")
    setInitialVariants([])
    setDatasetName("")
    setTrainName("")
    setValidationName("")
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    launch.mutate({
      function_name: functionName,
      analysis_model: analysisModel.trim(),
      mutation_model: mutationModel.trim(),
      max_iterations: Number(maxIterations),
      ...(datasetMode === "split" ? { dataset_name: datasetName } : { train_dataset_name: trainName, val_dataset_name: validationName }),
      ...(scoring === "evaluators" ? { evaluators } : { evaluation_name: evaluationName }),
      ...(initialVariants.length > 0 && { initial_variants: initialVariants }),
      ...(variantPrefix.trim() !== "" && { variant_prefix: variantPrefix.trim() }),
      batch_size: optionalInt(batchSize),
      seed: optionalInt(seed),
      max_concurrency: optionalInt(maxConcurrency),
      max_datapoints: optionalInt(maxDatapoints),
      ...(!includeInference && { include_inference_for_mutation: false })
    })
  }

  return (
    <Card title="Launch GEPA">
      <p className="muted">
        GEPA evolves the templates of a function's chat_completion variants: it scores them on a validation set, asks the analysis model about their
        answers on training samples and the mutation model for better templates, and keeps the variants no other beats on every evaluator.
      </p>
      <form onSubmit={submit} aria-label="Launch GEPA">
        <datalist id={modelsId}>
          {props.config.models.map((model) => <option key={model.name} value={model.name} />)}
        </datalist>
        <div className="row">
          <SelectField label="Function" value={functionName} onChange={chooseFunction} empty="(choose a function)" options={functions.map((candidate) => candidate.name)} />
          <Field label="Iterations" hint="at most 1000">
            {(id) => <input id={id} type="number" min={1} max={1000} required value={maxIterations} onChange={(event) => setMaxIterations(event.target.value)} />}
          </Field>
        </div>
        {fn !== undefined && (
          <>
            <div className="row">
              <SelectField
                label="Datasets"
                value={datasetMode}
                onChange={(value) => setDatasetMode(value as "split" | "pair")}
                options={[{ value: "split", label: "one, split into training and validation" }, { value: "pair", label: "a training and a validation dataset" }]}
              />
              {datasetMode === "split"
                ? <SelectField label="Dataset" value={datasetName} onChange={setDatasetName} empty="(choose a dataset)" options={datasetOptions} hint={datasets.isError ? "the datasets could not be listed" : undefined} />
                : (
                  <>
                    <SelectField label="Training dataset" value={trainName} onChange={setTrainName} empty="(choose a dataset)" options={datasetOptions} />
                    <SelectField label="Validation dataset" value={validationName} onChange={setValidationName} empty="(choose a dataset)" options={datasetOptions} />
                  </>
                )}
            </div>
            <div className="row">
              <SelectField
                label="Scored by"
                value={scoring}
                onChange={(value) => setScoring(value as "evaluators" | "evaluation")}
                options={[{ value: "evaluators", label: "evaluators of the function" }, { value: "evaluation", label: "an evaluation" }]}
              />
              {scoring === "evaluation" && (
                <SelectField label="Evaluation" value={evaluationName} onChange={setEvaluationName} empty="(choose an evaluation)" options={evaluations.map((evaluation) => evaluation.name)} />
              )}
            </div>
            {scoring === "evaluators" && (
              <Checklist legend="Evaluators" items={fn.evaluators.map(evaluatorItem)} chosen={evaluators} onChange={setEvaluators} empty="The function has no evaluators." />
            )}
          </>
        )}
        <div className="row">
          <ModelField label="Analysis model" value={analysisModel} onChange={setAnalysisModel} listId={modelsId} hint="reports on each scored answer" />
          <ModelField label="Mutation model" value={mutationModel} onChange={setMutationModel} listId={modelsId} hint="writes the new templates" />
        </div>
        <Collapsible summary="More settings">
          {fn !== undefined && (
            <Checklist
              legend="Initial variants (none checked: every chat_completion variant with a template)"
              items={fn.variants.filter((variant) => variant.type === "chat_completion").map((variant) => ({ value: variant.name, label: variant.name }))}
              chosen={initialVariants}
              onChange={setInitialVariants}
            />
          )}
          <div className="row">
            <TextField label="Variant prefix" value={variantPrefix} onChange={setVariantPrefix} hint="default gepa_<task>" />
            <TextField label="Batch size" type="number" value={batchSize} onChange={setBatchSize} hint="training datapoints per iteration (default 5)" />
            <TextField label="Seed" type="number" value={seed} onChange={setSeed} hint="the split and the samples follow from it" />
            <TextField label="Max concurrency" type="number" value={maxConcurrency} onChange={setMaxConcurrency} hint="inference calls at once (default 10)" />
            <TextField label="Max datapoints" type="number" value={maxDatapoints} onChange={setMaxDatapoints} hint="read from the datasets (default 1000)" />
          </div>
          <CheckboxField label="The mutation model reads each inference's input and output" checked={includeInference} onChange={setIncludeInference} />
        </Collapsible>
        <ErrorNotice error={launch.error} />
        <Button type="submit" kind="primary" disabled={launch.isPending || fn === undefined}>{launch.isPending ? "Launching…" : "Launch"}</Button>
      </form>
    </Card>
  )
}
