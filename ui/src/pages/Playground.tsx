/**
 * The Playground: a function's variants (each pinned with `variant_name`) or models (`model_name`)
 * run side by side on one input, streamed. The input is a form generated from the function's
 * `user` (and `system`) schema, or a text message. Runs are dry runs by default (`dryrun`: the
 * providers are called, nothing is stored); unchecked, each is stored tagged `source=playground`
 * and links to its inference.
 */
import { type FormEvent, useState } from "react"
import type { InferenceRequest, Input } from "../../../src/api/inference.ts"
import type { UiConfig, UiFunction } from "../../../src/api/uiConfig.ts"
import { api } from "../api.ts"
import { useUiConfig } from "../config.ts"
import { RunCard } from "../components/playground/RunCard.tsx"
import { type Target, targetKey, useRuns } from "../components/playground/runs.ts"
import { type FormValues, initialValues, schemaArguments } from "../components/playground/schemaArguments.ts"
import { SchemaForm } from "../components/playground/SchemaForm.tsx"
import { TargetPicker } from "../components/playground/TargetPicker.tsx"
import { Button, Card, CheckboxField, ErrorNotice, Loading, Page, SelectField, TextArea } from "../components/ui.tsx"

type Mode = "variants" | "models"

/** the input of a function call: each side's arguments from its form, or its text */
const functionInput = (fn: UiFunction, system: { values: FormValues; text: string }, user: { values: FormValues; text: string }): Input | string => {
  const input: { system?: Input["system"]; messages?: Input["messages"] } = {}
  if (fn.schemas.system !== undefined) {
    const parsed = schemaArguments(fn.schemas.system, system.values)
    if ("problem" in parsed) return `System: ${parsed.problem}`
    input.system = parsed.arguments
  } else if (system.text.trim() !== "") input.system = system.text
  if (fn.schemas.user !== undefined) {
    const parsed = schemaArguments(fn.schemas.user, user.values)
    if ("problem" in parsed) return `User: ${parsed.problem}`
    input.messages = [{ role: "user", content: [{ type: "text", arguments: parsed.arguments }] }]
  } else {
    if (user.text.trim() === "") return "Message: write something to send"
    input.messages = [{ role: "user", content: user.text }]
  }
  return input
}

export default function Playground() {
  const config = useUiConfig()
  const [mode, setMode] = useState<Mode>("variants")
  const [functionName, setFunctionName] = useState("")
  const [variants, setVariants] = useState<ReadonlyArray<string>>([])
  const [models, setModels] = useState<ReadonlyArray<string>>([])
  const [systemValues, setSystemValues] = useState<FormValues>({})
  const [userValues, setUserValues] = useState<FormValues>({})
  const [systemText, setSystemText] = useState("")
  const [userText, setUserText] = useState("")
  const [dryrun, setDryrun] = useState(true)
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const [storedLast, setStoredLast] = useState(false)
  const { runs, running, start, stop } = useRuns()

  if (config.isPending) return <Page title="Playground"><Loading what="the configuration" /></Page>
  if (config.isError) return <Page title="Playground"><ErrorNotice error={config.error} /></Page>

  const functions = config.data.functions.filter((fn) => !fn.builtin)
  const fn = mode === "variants" ? functions.find((candidate) => candidate.name === functionName) : undefined

  const chooseFunction = (name: string) => {
    setFunctionName(name)
    const chosen = functions.find((candidate) => candidate.name === name)
    setVariants([])
    setSystemValues(chosen?.schemas.system === undefined ? {} : initialValues(chosen.schemas.system))
    setUserValues(chosen?.schemas.user === undefined ? {} : initialValues(chosen.schemas.user))
  }

  const targets: ReadonlyArray<Target> = mode === "variants"
    ? variants.map((name) => ({ kind: "variant", name }))
    : models.map((name) => ({ kind: "model", name }))

  const run = (event: FormEvent) => {
    event.preventDefault()
    const input: Input | string = fn !== undefined
      ? functionInput(fn, { values: systemValues, text: systemText }, { values: userValues, text: userText })
      : userText.trim() === ""
      ? "Message: write something to send"
      : { ...(systemText.trim() !== "" && { system: systemText }), messages: [{ role: "user", content: userText }] }
    if (typeof input === "string") return setProblem(input)
    if (targets.length === 0) return setProblem(mode === "variants" ? "Pick at least one variant" : "Pick at least one model")
    setProblem(undefined)
    setStoredLast(!dryrun)
    start(targets, (target): InferenceRequest => ({
      ...(target.kind === "variant" ? { function_name: functionName, variant_name: target.name } : { model_name: target.name }),
      input,
      stream: true,
      ...(dryrun ? { dryrun: true } : { tags: { source: "playground" } })
    }))
  }

  return (
    <Page title="Playground">
      <form onSubmit={run} aria-label="Playground">
        <Card title="What to compare">
          <div className="row">
            <SelectField
              label="Compare"
              value={mode}
              onChange={(value) => setMode(value as Mode)}
              options={[{ value: "variants", label: "variants of a function" }, { value: "models", label: "models" }]}
            />
            {mode === "variants" && (
              <SelectField label="Function" value={functionName} onChange={chooseFunction} empty="(choose a function)" options={functions.map((candidate) => candidate.name)} />
            )}
          </div>
          {mode === "variants" && fn !== undefined && (
            <TargetPicker legend="Variants" choices={fn.variants.map((variant) => ({ name: variant.name, detail: variant.model === "" ? variant.type : `${variant.type}, ${variant.model}` }))} picked={variants} onChange={setVariants} />
          )}
          {mode === "models" && (
            <TargetPicker
              legend="Models"
              choices={config.data.models.map((model) => ({ name: model.name, detail: model.routing.join(" → ") }))}
              picked={models}
              onChange={setModels}
              allowOther="a short-hand such as openai::gpt-4o-mini or dummy::echo"
            />
          )}
        </Card>
        {(mode === "models" || fn !== undefined) && (
          <Card title="Input">
            {fn?.schemas.system !== undefined
              ? <SchemaForm legend="System arguments" schema={fn.schemas.system} values={systemValues} onChange={setSystemValues} />
              : <TextArea label="System (optional)" rows={2} value={systemText} onChange={setSystemText} />}
            {fn?.schemas.user !== undefined
              ? <SchemaForm legend="User arguments" schema={fn.schemas.user} values={userValues} onChange={setUserValues} />
              : <TextArea label="Message" rows={4} value={userText} onChange={setUserText} />}
            <CheckboxField label="Dry run: call the providers but store nothing" checked={dryrun} onChange={setDryrun} />
            {problem !== undefined && <p role="alert" className="notice error">{problem}</p>}
            <div className="row">
              <Button type="submit" kind="primary" disabled={running}>Run {targets.length > 0 ? `${targets.length} side by side` : ""}</Button>
              {running && <Button onClick={stop}>Stop</Button>}
            </div>
          </Card>
        )}
      </form>
      {runs.length > 0 && (
        <section aria-label="Answers" className="side-by-side">
          {runs.map((entry) => <RunCard key={targetKey(entry.target)} run={entry} stored={storedLast} />)}
        </section>
      )}
    </Page>
  )
}
