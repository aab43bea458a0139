/**
 * A form generated from the JSON Schema of a template's arguments (`schemaArguments.ts`): string
 * as text, number and integer as numbers, boolean as a checkbox, enum as a choice, anything else
 * as JSON; each field labelled with its name (and "required"), its description as the hint.
 */
import { CheckboxField, Field, SelectField, TextArea, TextField } from "../ui.tsx"
import { type FormValues, type JsonSchema, schemaProperties } from "./schemaArguments.ts"

export const SchemaForm = (props: { legend: string; schema: JsonSchema; values: FormValues; onChange: (values: FormValues) => void }) => {
  const set = (name: string) => (value: string | boolean) => props.onChange({ ...props.values, [name]: value })
  const properties = schemaProperties(props.schema)
  return (
    <fieldset className="schema-form">
      <legend>{props.legend}</legend>
      {properties.length === 0 && <p className="muted">This template takes no arguments.</p>}
      {properties.map((property) => {
        const label = property.required ? `${property.name} (required)` : property.name
        const value = props.values[property.name]
        const text = typeof value === "string" ? value : ""
        switch (property.kind) {
          case "boolean":
            return <CheckboxField key={property.name} label={label} checked={value === true} onChange={set(property.name)} />
          case "enum":
            return (
              <SelectField
                key={property.name}
                label={label}
                hint={property.description}
                value={text}
                onChange={set(property.name)}
                empty={property.required ? undefined : "(not set)"}
                options={property.options.map((option, index) => ({ value: String(index), label: typeof option === "string" ? option : JSON.stringify(option) }))}
              />
            )
          case "string":
            return <TextField key={property.name} label={label} hint={property.description} value={text} onChange={set(property.name)} />
          case "number":
          case "integer":
            return (
              <Field key={property.name} label={label} hint={property.description}>
                {(id) => (
                  <input id={id} type="number" step={property.kind === "integer" ? 1 : "any"} value={text} onChange={(event) => set(property.name)(event.target.value)} />
                )}
              </Field>
            )
          default:
            return <TextArea key={property.name} label={`${label} (JSON)`} hint={property.description} rows={3} mono value={text} onChange={set(property.name)} />
        }
      })}
    </fieldset>
  )
}
