/** The filters of a dataset's datapoints: function, one tag, and words searched in the input and output. */
import { type FormEvent, useState } from "react"
import { Button, ErrorNotice, SelectField, TextField } from "../ui.tsx"
import { parseTag } from "./tags.ts"

export interface DatapointFilterValues {
  readonly functionName: string
  readonly tag: { readonly key: string; readonly value: string } | undefined
  readonly search: string
}

export const noFilters: DatapointFilterValues = { functionName: "", tag: undefined, search: "" }

export const DatapointFilters = (props: { functions: ReadonlyArray<string>; onApply: (filters: DatapointFilterValues) => void }) => {
  const [functionName, setFunctionName] = useState("")
  const [tag, setTag] = useState("")
  const [search, setSearch] = useState("")
  const [problem, setProblem] = useState<string | null>(null)

  const apply = (event: FormEvent) => {
    event.preventDefault()
    let parsed: DatapointFilterValues["tag"]
    if (tag.trim() !== "") {
      const result = parseTag(tag, "Tag")
      if ("problem" in result) return setProblem(result.problem)
      parsed = result.value
    }
    setProblem(null)
    props.onApply({ functionName, tag: parsed, search: search.trim() })
  }
  const clear = () => {
    setFunctionName("")
    setTag("")
    setSearch("")
    setProblem(null)
    props.onApply(noFilters)
  }

  return (
    <form onSubmit={apply} aria-label="Filter datapoints" className="card">
      <div className="row">
        <SelectField label="Function" value={functionName} onChange={setFunctionName} options={props.functions} empty="any function" />
        <TextField label="Tag (key=value)" value={tag} onChange={setTag} placeholder="user=alice" />
        <TextField
          label="Search"
          type="search"
          value={search}
          onChange={setSearch}
          hint="words of the input or output; any of them matches, most matches first"
        />
      </div>
      {problem !== null && <ErrorNotice error={new Error(problem)} />}
      <div className="row">
        <button type="submit" className="button primary">Apply filters</button>
        <Button onClick={clear}>Clear</Button>
      </div>
    </form>
  )
}
