/** Checkboxes of what to run (variants or models), with a field to add a name that is not listed (a model short-hand). */
import { useState } from "react"
import { Button, CheckboxField, TextField } from "../ui.tsx"

export const TargetPicker = (props: {
  legend: string
  choices: ReadonlyArray<{ name: string; detail?: string }>
  picked: ReadonlyArray<string>
  onChange: (picked: ReadonlyArray<string>) => void
  /** the hint of the field that adds another name; no field without it */
  allowOther?: string
}) => {
  const [added, setAdded] = useState<ReadonlyArray<string>>([])
  const [other, setOther] = useState("")
  const listed = [...props.choices, ...added.filter((name) => !props.choices.some((choice) => choice.name === name)).map((name) => ({ name, detail: undefined }))]
  const toggle = (name: string) => (checked: boolean) =>
    props.onChange(checked ? [...props.picked.filter((picked) => picked !== name), name] : props.picked.filter((picked) => picked !== name))
  const add = () => {
    const name = other.trim()
    if (name === "") return
    setAdded((current) => current.includes(name) ? current : [...current, name])
    if (!props.picked.includes(name)) props.onChange([...props.picked, name])
    setOther("")
  }
  return (
    <fieldset className="target-picker">
      <legend>{props.legend}</legend>
      {listed.length === 0 && <p className="muted">None configured.</p>}
      <div className="row">
        {listed.map((choice) => (
          <CheckboxField
            key={choice.name}
            label={choice.detail === undefined ? choice.name : `${choice.name} (${choice.detail})`}
            checked={props.picked.includes(choice.name)}
            onChange={toggle(choice.name)}
          />
        ))}
      </div>
      {props.allowOther !== undefined && (
        // Enter adds the name rather than submitting the form around
        <div className="row" onKeyDown={(event) => {
          if (event.key === "Enter" && (event.target as HTMLElement).tagName === "INPUT") {
            event.preventDefault()
            add()
          }
        }}>
          <TextField label={`Another ${props.legend.toLowerCase().replace(/s$/, "")}`} hint={props.allowOther} value={other} onChange={setOther} />
          <Button onClick={add} disabled={other.trim() === ""}>Add</Button>
        </div>
      )}
    </fieldset>
  )
}
