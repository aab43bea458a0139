/**
 * The filters of the inference list, kept in the page's URL (so that a link shows the same list:
 * `/inferences?function_name=haiku&tag=user%3Dalice`) and turned into the request of the public
 * `POST /v1/inferences/list_inferences`.
 */
import { type FormEvent, useState } from "react"
import type { InferenceFilterLeaf, ListInferencesRequest } from "../../../../src/api/inferences.ts"
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { Button, SelectField, TextField } from "../ui.tsx"

/** the URL's search parameters the filters use, each a string ("" when unset) */
export const filterKeys = ["function_name", "variant_name", "episode_id", "tag", "after", "before", "metric", "metric_op", "metric_value"] as const
export type FilterValues = Record<(typeof filterKeys)[number], string>

export const filterValues = (search: URLSearchParams): FilterValues =>
  Object.fromEntries(filterKeys.map((key) => [key, search.get(key) ?? ""])) as FilterValues

const comparisons = ["=", "!=", "<", "<=", ">", ">="] as const

/** `values` as list_inferences' request (without paging), or what is wrong with them */
export const listRequest = (
  values: FilterValues,
  metrics: UiConfig["metrics"]
): { request: Omit<ListInferencesRequest, "limit" | "offset"> } | { problem: string } => {
  const leaves: Array<InferenceFilterLeaf> = []
  if (values.tag !== "") {
    const at = values.tag.indexOf("=")
    if (at <= 0) return { problem: `Tag: write it as key=value (got "${values.tag}")` }
    leaves.push({ type: "tag", key: values.tag.slice(0, at).trim(), value: values.tag.slice(at + 1).trim(), comparison_operator: "=" })
  }
  for (const [field, label, operator] of [["after", "After", ">="], ["before", "Before", "<"]] as const) {
    if (values[field] === "") continue
    const time = new Date(values[field])
    if (Number.isNaN(time.getTime())) return { problem: `${label}: not a time ("${values[field]}")` }
    leaves.push({ type: "time", time: time.toISOString(), comparison_operator: operator })
  }
  if (values.metric !== "") {
    const metric = metrics.find((candidate) => candidate.name === values.metric)
    if (values.metric_value === "") return { problem: "Metric value: give the value to compare with" }
    if (metric?.type === "boolean") {
      leaves.push({ type: "boolean_metric", metric_name: values.metric, value: values.metric_value === "true" })
    } else {
      const value = Number(values.metric_value)
      if (!Number.isFinite(value)) return { problem: `Metric value: not a number ("${values.metric_value}")` }
      const operator = (comparisons as ReadonlyArray<string>).includes(values.metric_op) ? values.metric_op as (typeof comparisons)[number] : "="
      leaves.push({ type: "float_metric", metric_name: values.metric, value, comparison_operator: operator })
    }
  }
  return {
    request: {
      function_name: values.function_name || undefined,
      variant_name: values.variant_name || undefined,
      episode_id: values.episode_id.trim() || undefined,
      filters: leaves.length === 0 ? undefined : leaves.length === 1 ? leaves[0] : { type: "and", children: leaves }
    }
  }
}

/** The filter form: edits a copy of `initial` and hands it to `onApply` when submitted (Enter in any field, or the button). */
export const InferenceFilters = (props: { initial: FilterValues; config: UiConfig | undefined; onApply: (values: FilterValues) => void }) => {
  const [values, setValues] = useState(props.initial)
  const set = (key: keyof FilterValues) => (value: string) => setValues((current) => ({ ...current, [key]: value }))
  const functions = props.config?.functions ?? []
  const chosen = functions.find((fn) => fn.name === values.function_name)
  const metric = props.config?.metrics.find((candidate) => candidate.name === values.metric)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    props.onApply(values)
  }
  return (
    <form className="filters" onSubmit={submit} aria-label="Filters" role="search">
      <SelectField
        label="Function"
        value={values.function_name}
        onChange={(name) => setValues((current) => ({ ...current, function_name: name, variant_name: "" }))}
        empty="any function"
        // a function chosen in a link but no longer configured still shows
        options={[
          ...functions.map((fn) => ({ value: fn.name, label: fn.builtin ? `${fn.name} (built-in)` : fn.name })),
          ...(values.function_name !== "" && chosen === undefined ? [values.function_name] : [])
        ]}
      />
      <SelectField
        label="Variant"
        value={values.variant_name}
        onChange={set("variant_name")}
        empty="any variant"
        options={[
          ...(chosen?.variants.map((variant) => variant.name) ?? []),
          ...(values.variant_name !== "" && !(chosen?.variants.some((variant) => variant.name === values.variant_name) ?? false) ? [values.variant_name] : [])
        ]}
      />
      <TextField label="Episode id" value={values.episode_id} onChange={set("episode_id")} />
      <TextField label="Tag" value={values.tag} onChange={set("tag")} placeholder="key=value" />
      <TextField label="After" type="datetime-local" value={values.after} onChange={set("after")} />
      <TextField label="Before" type="datetime-local" value={values.before} onChange={set("before")} />
      <SelectField
        label="Metric"
        value={values.metric}
        onChange={(name) => setValues((current) => ({ ...current, metric: name, metric_op: "", metric_value: "" }))}
        empty="no metric filter"
        options={(props.config?.metrics ?? []).map((candidate) => ({ value: candidate.name, label: `${candidate.name} (${candidate.type})` }))}
      />
      {metric?.type === "float" && (
        <SelectField label="Comparison" value={values.metric_op || "="} onChange={set("metric_op")} options={[...comparisons]} />
      )}
      {metric?.type === "boolean"
        ? <SelectField label="Metric value" value={values.metric_value} onChange={set("metric_value")} empty="choose…" options={["true", "false"]} />
        : metric !== undefined && <TextField label="Metric value" type="number" value={values.metric_value} onChange={set("metric_value")} />}
      <div className="actions">
        <Button type="submit" kind="primary">Apply filters</Button>
        <Button onClick={() => props.onApply(Object.fromEntries(filterKeys.map((key) => [key, ""])) as FilterValues)}>Clear</Button>
      </div>
    </form>
  )
}
