/**
 * "Create from inferences": stored inferences picked by a query (function, variant, a tag)
 * become datapoints of a dataset, new or existing (`from_inferences`, type `inference_query`).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import type { DatapointIds, FromInferencesRequest } from "../../../../src/api/datasets.ts"
import { api } from "../../api.ts"
import { useUiConfig } from "../../config.ts"
import { Card, ErrorNotice, SelectField, Success, TextField } from "../ui.tsx"
import { datasetApi, datasetKeys, datasetPage } from "./paths.ts"
import { parseTag } from "./tags.ts"

type OutputSource = "inference" | "demonstration" | "none"

const outputSources: ReadonlyArray<{ value: OutputSource; label: string }> = [
  { value: "inference", label: "the inference's output" },
  { value: "demonstration", label: "its latest demonstration (others skipped)" },
  { value: "none", label: "none" }
]

export const FromInferencesForm = () => {
  const client = useQueryClient()
  const config = useUiConfig()
  const [dataset, setDataset] = useState("")
  const [functionName, setFunctionName] = useState("")
  const [variantName, setVariantName] = useState("")
  const [tag, setTag] = useState("")
  const [outputSource, setOutputSource] = useState<OutputSource>("inference")
  const [limit, setLimit] = useState("100")
  // a problem of the form itself, found before anything is sent
  const [problem, setProblem] = useState<Error | null>(null)
  const create = useMutation({
    mutationFn: async ({ name, body }: { name: string; body: FromInferencesRequest }) => {
      const { ids } = await api<DatapointIds>(`${datasetApi(name)}/from_inferences`, { body })
      return { dataset: name, count: ids.length }
    },
    onSuccess: () => client.invalidateQueries({ queryKey: datasetKeys.all })
  })

  const functions = (config.data?.functions ?? []).filter((fn) => !fn.builtin)
  const variants = functions.find((fn) => fn.name === functionName)?.variants ?? []

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setProblem(null)
    create.reset()
    const name = dataset.trim()
    if (name === "") return setProblem(new Error("Dataset name: give the dataset a name"))
    const count = Number(limit)
    if (!Number.isInteger(count) || count < 1) return setProblem(new Error("Limit: a whole number of inferences, at least 1"))
    // the filter grammar of list_inferences (src/api/inferences.ts): one tag, compared for equality
    let filters: unknown
    if (tag.trim() !== "") {
      const parsed = parseTag(tag, "Tag filter")
      if ("problem" in parsed) return setProblem(new Error(parsed.problem))
      filters = { type: "tag", key: parsed.value.key, value: parsed.value.value, comparison_operator: "=" }
    }
    const body: FromInferencesRequest = {
      type: "inference_query",
      ...(functionName !== "" && { function_name: functionName }),
      ...(variantName !== "" && { variant_name: variantName }),
      ...(filters !== undefined && { filters }),
      output_source: outputSource,
      limit: count
    }
    create.mutate({ name, body })
  }
  const created = create.data ?? null
  const busy = create.isPending
  const error = problem ?? create.error

  return (
    <Card title="Create from inferences">
      <form onSubmit={submit} aria-label="Create from inferences">
        <p className="muted">
          Stored inferences that match become datapoints of the dataset (created if new, added to if not), newest first, up to the limit.
        </p>
        <div className="row">
          <TextField label="Dataset name" value={dataset} onChange={setDataset} required placeholder="my_dataset" />
          <SelectField
            label="Function"
            value={functionName}
            onChange={(value) => {
              setFunctionName(value)
              setVariantName("")
            }}
            options={functions.map((fn) => fn.name)}
            empty="any function"
          />
          <SelectField label="Variant" value={variantName} onChange={setVariantName} options={variants.map((variant) => variant.name)} empty="any variant" />
          <TextField label="Tag filter (key=value)" value={tag} onChange={setTag} placeholder="user=alice" />
          <SelectField label="Output" value={outputSource} onChange={(value) => setOutputSource(value as OutputSource)} options={outputSources} />
          <TextField label="Limit" type="number" value={limit} onChange={setLimit} />
        </div>
        <ErrorNotice error={config.error} />
        <ErrorNotice error={error} />
        {created !== null && (
          <Success>
            Added {created.count} datapoint{created.count === 1 ? "" : "s"} to <Link to={datasetPage(created.dataset)}>{created.dataset}</Link>.
          </Success>
        )}
        <button type="submit" className="button primary" disabled={busy}>{busy ? "Creating…" : "Create datapoints"}</button>
      </form>
    </Card>
  )
}
