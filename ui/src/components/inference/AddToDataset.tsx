/** Adds one inference to a dataset as a datapoint (the public `POST /v1/datasets/:name/from_inferences`). */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import type { DatapointIds, FromInferencesRequest } from "../../../../src/api/datasets.ts"
import { api } from "../../api.ts"
import { Button, ErrorNotice, SelectField, Success, TextField } from "../ui.tsx"

type OutputSource = "inference" | "demonstration" | "none"

export const AddToDataset = (props: { inferenceId: string }) => {
  const client = useQueryClient()
  const [dataset, setDataset] = useState("")
  const [outputSource, setOutputSource] = useState<OutputSource>("inference")
  const add = useMutation({
    mutationFn: ({ name, body }: { name: string; body: FromInferencesRequest }) =>
      api<DatapointIds>(`/v1/datasets/${encodeURIComponent(name)}/from_inferences`, { body }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["datasets"] })
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const name = dataset.trim()
    if (name === "") return
    add.mutate({ name, body: { type: "inference_ids", inference_ids: [props.inferenceId], output_source: outputSource } })
  }
  const added = add.variables?.name
  return (
    <form onSubmit={submit} aria-label="Add to a dataset">
      <div className="row">
        <TextField label="Dataset name" value={dataset} onChange={setDataset} required hint="a new name creates the dataset" />
        <SelectField
          label="Datapoint output"
          value={outputSource}
          onChange={(value) => setOutputSource(value as OutputSource)}
          options={[
            { value: "inference", label: "the inference's output" },
            { value: "demonstration", label: "its latest demonstration" },
            { value: "none", label: "no output" }
          ]}
        />
      </div>
      <Button type="submit" kind="primary" disabled={dataset.trim() === "" || add.isPending}>Add to dataset</Button>
      <ErrorNotice error={add.error} />
      {add.isSuccess && added !== undefined && (add.data.ids.length > 0
        ? (
          <Success>
            Added to <Link to={`/datasets/${encodeURIComponent(added)}`}>{added}</Link> as datapoint <code>{add.data.ids[0]}</code>.
          </Success>
        )
        : <p role="status" className="notice error">Nothing added: the inference has no demonstration.</p>)}
    </form>
  )
}
