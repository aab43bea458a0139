/**
 * "Import JSONL": a file of datapoints, one JSON object a line (as export writes them, or as
 * create takes them), added to a dataset all or nothing. The file is read in the browser and
 * sent as the body of the import route.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import type { DatapointIds } from "../../../../src/api/datasets.ts"
import { api } from "../../api.ts"
import { Card, ErrorNotice, Field, Success, TextField } from "../ui.tsx"
import { datasetApi, datasetKeys, datasetPage } from "./paths.ts"

export const ImportForm = () => {
  const client = useQueryClient()
  const [dataset, setDataset] = useState("")
  const [file, setFile] = useState<File | null>(null)
  // a problem of the form itself, found before anything is sent
  const [problem, setProblem] = useState<Error | null>(null)
  const importFile = useMutation({
    mutationFn: async ({ name, file }: { name: string; file: File }) => {
      const { ids } = await api<DatapointIds>(`${datasetApi(name)}/datapoints/import`, { method: "POST", text: await file.text() })
      return { dataset: name, count: ids.length }
    },
    onSuccess: () => client.invalidateQueries({ queryKey: datasetKeys.all })
  })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setProblem(null)
    importFile.reset()
    const name = dataset.trim()
    if (name === "") return setProblem(new Error("Dataset name: give the dataset a name"))
    if (file === null) return setProblem(new Error("JSONL file: choose a file"))
    importFile.mutate({ name, file })
  }
  const imported = importFile.data ?? null
  const busy = importFile.isPending
  const error = problem ?? importFile.error

  return (
    <Card title="Import JSONL">
      <form onSubmit={submit} aria-label="Import JSONL">
        <p className="muted">One datapoint per line, as Export writes them; checked against their functions, and imported all or nothing.</p>
        <div className="row">
          <TextField label="Dataset to import into" value={dataset} onChange={setDataset} required placeholder="my_dataset" />
          <Field label="JSONL file">
            {(id) => (
              <input id={id} type="file" accept=".jsonl,.ndjson,.json,.txt" onChange={(event) => setFile(event.target.files?.[0] ?? null)} />
            )}
          </Field>
        </div>
        <ErrorNotice error={error} />
        {imported !== null && (
          <Success>
            Imported {imported.count} datapoint{imported.count === 1 ? "" : "s"} into <Link to={datasetPage(imported.dataset)}>{imported.dataset}</Link>.
          </Success>
        )}
        <button type="submit" className="button primary" disabled={busy}>{busy ? "Importing…" : "Import"}</button>
      </form>
    </Card>
  )
}
