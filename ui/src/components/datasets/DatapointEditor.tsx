/**
 * The editor of a live datapoint: name, tags (`key=value` lines), input and output (JSON, parsed
 * before anything is sent). Saving sends only what changed (PATCH datapoints): the gateway writes
 * a new version with a new id and stales this one; `onSaved` gets the new id.
 */
import { type FormEvent, useState } from "react"
import type { DatapointIds, UpdateDatapoint } from "../../../../src/api/datasets.ts"
import type { Datapoint } from "../../../../src/api/uiDatasets.ts"
import { api } from "../../api.ts"
import { Card, ErrorNotice, TextArea, TextField } from "../ui.tsx"
import { datasetApi } from "./paths.ts"
import { parseTags, sameTags, tagsText } from "./tags.ts"

const pretty = (value: unknown) => JSON.stringify(value, null, 2)

/** the JSON of a textarea, or the problem naming the field */
const parseJson = (text: string, field: string): { value: unknown } | { problem: string } => {
  try {
    return { value: JSON.parse(text) }
  } catch (error) {
    return { problem: `${field} is not valid JSON: ${(error as Error).message}` }
  }
}

export const DatapointEditor = (props: { datapoint: Datapoint; onSaved: (newId: string) => void }) => {
  const { datapoint } = props
  const [name, setName] = useState(datapoint.name ?? "")
  const [tags, setTags] = useState(tagsText(datapoint.tags))
  const [input, setInput] = useState(pretty(datapoint.input))
  const [output, setOutput] = useState(pretty(datapoint.output))
  const [problem, setProblem] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setError(null)
    const parsedTags = parseTags(tags)
    if ("problem" in parsedTags) return setProblem(parsedTags.problem)
    const parsedInput = parseJson(input, "Input")
    if ("problem" in parsedInput) return setProblem(parsedInput.problem)
    const parsedOutput = parseJson(output, "Output")
    if ("problem" in parsedOutput) return setProblem(parsedOutput.problem)
    setProblem(null)
    // only what changed: an untouched field keeps its stored value as it is
    const changes: Record<string, unknown> = {}
    if (name.trim() !== (datapoint.name ?? "")) changes.name = name.trim() === "" ? null : name.trim()
    if (!sameTags(parsedTags.value, datapoint.tags)) changes.tags = parsedTags.value
    if (pretty(parsedInput.value) !== pretty(datapoint.input)) changes.input = parsedInput.value
    if (pretty(parsedOutput.value) !== pretty(datapoint.output)) changes.output = parsedOutput.value
    if (Object.keys(changes).length === 0) return setProblem("Nothing changed: edit a field before saving.")
    const update = { id: datapoint.id, type: datapoint.type, ...changes } as UpdateDatapoint
    setBusy(true)
    try {
      const { ids } = await api<DatapointIds>(`${datasetApi(datapoint.dataset_name)}/datapoints`, { method: "PATCH", body: { datapoints: [update] } })
      props.onSaved(ids[0])
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }

  return (
    <Card title="Edit">
      <form onSubmit={submit} aria-label="Edit datapoint">
        <p className="muted">Saving writes a new version with a new id; this version becomes stale and stays in the history.</p>
        <TextField label="Name" value={name} onChange={setName} hint="empty: no name" />
        <TextArea label="Tags" value={tags} onChange={setTags} rows={Math.max(3, Object.keys(datapoint.tags).length + 1)} mono hint="one key=value per line" />
        <div className="side-by-side">
          <TextArea label="Input (JSON)" value={input} onChange={setInput} rows={14} mono />
          <TextArea
            label="Output (JSON)"
            value={output}
            onChange={setOutput}
            rows={14}
            mono
            hint={datapoint.type === "chat" ? "a list of content blocks; null: no output" : "a value that fits the output schema; null: no output"}
          />
        </div>
        {problem !== null && <ErrorNotice error={new Error(problem)} />}
        <ErrorNotice error={error} />
        <button type="submit" className="button primary" disabled={busy}>{busy ? "Saving…" : "Save as a new version"}</button>
      </form>
    </Card>
  )
}
