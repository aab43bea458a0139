/** The Overview's pickers: the function (or all), the time range (presets, or custom from/to applied together) and the bucket. */
import type { OverviewBucket, UiOverviewFunction } from "../../../../src/api/uiOverview.ts"
import { useState } from "react"
import { Button, Field, SelectField } from "../ui.tsx"
import { bucketChoices, type RangeChoice, rangePresets } from "./range.ts"

export interface OverviewSelection {
  readonly functionName: string
  readonly range: RangeChoice
  readonly customFrom: string
  readonly customTo: string
  /** "" for the automatic one */
  readonly bucket: OverviewBucket | ""
}

export const OverviewFilters = (props: {
  selection: OverviewSelection
  functions: ReadonlyArray<UiOverviewFunction>
  onChange: (change: Partial<OverviewSelection>) => void
}) => {
  const { selection, onChange } = props
  // the chosen function stays listed while the answer that lists it loads
  const names = props.functions.map((fn) => fn.name)
  const options = [
    ...props.functions.map((fn) => ({
      value: fn.name,
      label: `${fn.name} (${fn.inferences.toLocaleString()}${fn.configured ? "" : ", not configured"})`
    })),
    ...(selection.functionName !== "" && !names.includes(selection.functionName) ? [{ value: selection.functionName, label: selection.functionName }] : [])
  ]
  return (
    <div className="row overview-filters" role="group" aria-label="Overview filters">
      <SelectField
        label="Function"
        value={selection.functionName}
        onChange={(functionName) => onChange({ functionName })}
        options={options}
        empty="All functions"
      />
      <SelectField
        label="Time range"
        value={selection.range}
        onChange={(range) => onChange({ range: range as RangeChoice })}
        options={[...rangePresets.map(({ label, value }) => ({ value, label })), { value: "custom", label: "Custom range" }]}
      />
      <SelectField label="Bucket" value={selection.bucket} onChange={(bucket) => onChange({ bucket: bucket as OverviewBucket | "" })} options={bucketChoices} />
      {selection.range === "custom" && (
        // drafts until applied: each edit of a date-time field would otherwise ask the gateway
        <CustomRange key={`${selection.customFrom}|${selection.customTo}`} from={selection.customFrom} to={selection.customTo} onApply={onChange} />
      )}
    </div>
  )
}

const CustomRange = (props: { from: string; to: string; onApply: (range: { customFrom: string; customTo: string }) => void }) => {
  const [from, setFrom] = useState(props.from)
  const [to, setTo] = useState(props.to)
  return (
    <form
      className="row custom-range"
      aria-label="Custom time range"
      onSubmit={(event) => {
        event.preventDefault()
        props.onApply({ customFrom: from, customTo: to })
      }}
    >
      <Field label="From (local time)">
        {(id) => <input id={id} type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />}
      </Field>
      <Field label="To (local time)">
        {(id) => <input id={id} type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />}
      </Field>
      <Button type="submit" kind="primary">Apply range</Button>
    </form>
  )
}
