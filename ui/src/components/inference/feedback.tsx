/**
 * Feedback on inferences and episodes: the table of what was given, and the forms that give more
 * through the public `POST /feedback` (a configured metric, a comment, a demonstration edited from
 * the inference's output).
 */
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { FeedbackRequest, FeedbackResponse } from "../../../../src/api/feedback.ts"
import type { UiMetric } from "../../../../src/api/uiConfig.ts"
import type { UiStoredFeedback, UiStoredInference } from "../../../../src/api/uiInferences.ts"
import { api } from "../../api.ts"
import { JsonView } from "../JsonView.tsx"
import { Badge, Button, ErrorNotice, formatTime, SelectField, Success, Table, TextArea, TextField } from "../ui.tsx"
import { parseJson } from "./content.tsx"

const FeedbackValue = (props: { feedback: UiStoredFeedback }) => {
  const { kind, value } = props.feedback
  if (kind === "boolean") return <Badge tone={value === true ? "good" : "bad"}>{String(value)}</Badge>
  if (kind === "float") return <span className="mono">{String(value)}</span>
  if (kind === "comment") return <span className="text-block">{String(value)}</span>
  return <DemonstrationValue value={value} />
}

/** A chat demonstration's text and tool calls as blocks; anything else (a json function's) as JSON. */
const DemonstrationValue = (props: { value: unknown }) => {
  const blocks = Array.isArray(props.value) ? props.value as ReadonlyArray<Record<string, unknown>> : undefined
  if (blocks === undefined || !blocks.every((block) => block?.type === "text" || block?.type === "tool_call")) {
    return <JsonView value={props.value} label="demonstration" />
  }
  return (
    <div>
      {blocks.map((block, i) =>
        block.type === "text"
          ? <div key={i} className="text-block">{String(block.text)}</div>
          : (
            <div key={i} className="block">
              <div className="block-label">Tool call <code>{String(block.name)}</code></div>
              <JsonView value={block.arguments} label={`arguments of ${String(block.name)}`} />
            </div>
          )
      )}
    </div>
  )
}

/** Feedback as a table: metric, value, target, time. */
export const FeedbackTable = (props: { feedback: ReadonlyArray<UiStoredFeedback>; caption: string; showTarget?: boolean }) => (
  <Table
    caption={props.caption}
    rows={props.feedback}
    rowKey={(feedback) => feedback.feedback_id}
    empty="No feedback yet."
    columns={[
      { header: "Metric", cell: (feedback) => feedback.kind === "comment" || feedback.kind === "demonstration" ? <em>{feedback.kind}</em> : feedback.metric_name },
      { header: "Value", cell: (feedback) => <FeedbackValue feedback={feedback} /> },
      ...(props.showTarget === true ? [{ header: "On", cell: (feedback: UiStoredFeedback) => feedback.target_type }] : []),
      { header: "Time", cell: (feedback) => formatTime(feedback.timestamp) }
    ]}
  />
)

const useSendFeedback = (onSent: (id: string) => void) =>
  useMutation({
    mutationFn: (body: FeedbackRequest) => api<FeedbackResponse>("/feedback", { body }),
    onSuccess: (answer) => onSent(answer.feedback_id)
  })

/** The text of a demonstration prefilled from `inference`'s output, and how it is sent. */
export const demonstrationDraft = (inference: UiStoredInference): { text: string; format: DemonstrationFormat } => {
  if (inference.type === "json") {
    const value = inference.output.parsed ?? parseJson(inference.output.raw) ?? {}
    return { text: JSON.stringify(value, null, 2), format: "json" }
  }
  const blocks = inference.output
  if (blocks.every((block) => block.type === "text")) return { text: blocks.map((block) => block.text).join("\n"), format: "text" }
  // a demonstration holds text and tool calls (given by name and arguments)
  const editable = blocks.flatMap((block): ReadonlyArray<Record<string, unknown>> =>
    block.type === "text"
      ? [{ type: "text", text: block.text }]
      : block.type === "tool_call"
      ? [{ type: "tool_call", id: block.id, name: block.name ?? block.raw_name, arguments: block.arguments ?? parseJson(block.raw_arguments) ?? {} }]
      : []
  )
  return { text: JSON.stringify(editable, null, 2), format: "json" }
}

type DemonstrationFormat = "text" | "json"

const MetricForm = (props: { inference: UiStoredInference; metrics: ReadonlyArray<UiMetric>; onSent: (id: string) => void }) => {
  const [metricName, setMetricName] = useState(props.metrics[0]?.name ?? "")
  const [value, setValue] = useState("")
  const metric = props.metrics.find((candidate) => candidate.name === metricName)
  const send = useSendFeedback(props.onSent)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (metric === undefined || value === "") return
    const target = metric.level === "episode" ? { episode_id: props.inference.episode_id } : { inference_id: props.inference.inference_id }
    send.mutate({ metric_name: metric.name, value: metric.type === "boolean" ? value === "true" : Number(value), ...target })
  }
  if (props.metrics.length === 0) return <p className="muted">No metric is configured.</p>
  return (
    <form onSubmit={submit} aria-label="Metric feedback">
      <SelectField
        label="Metric"
        value={metricName}
        onChange={(name) => {
          setMetricName(name)
          setValue("")
        }}
        options={props.metrics.map((candidate) => ({
          value: candidate.name,
          label: `${candidate.name} (${candidate.type}${candidate.level === "episode" ? ", on the episode" : ""})`
        }))}
      />
      {metric?.type === "boolean"
        ? <SelectField label="Metric value" value={value} onChange={setValue} empty="choose…" options={["true", "false"]} />
        : <TextField label="Metric value" type="number" value={value} onChange={setValue} />}
      <Button type="submit" kind="primary" disabled={value === "" || send.isPending}>Send metric</Button>
      <ErrorNotice error={send.error} />
      {send.isSuccess && <Success>Feedback {send.data.feedback_id} sent.</Success>}
    </form>
  )
}

const CommentForm = (props: { inference: UiStoredInference; onSent: (id: string) => void }) => {
  const [comment, setComment] = useState("")
  const send = useSendFeedback((id) => {
    setComment("")
    props.onSent(id)
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (comment.trim() !== "") send.mutate({ metric_name: "comment", value: comment, inference_id: props.inference.inference_id })
  }
  return (
    <form onSubmit={submit} aria-label="Comment feedback">
      <TextArea label="Comment" value={comment} onChange={setComment} rows={4} />
      <Button type="submit" kind="primary" disabled={comment.trim() === "" || send.isPending}>Send comment</Button>
      <ErrorNotice error={send.error} />
      {send.isSuccess && <Success>Comment {send.data.feedback_id} sent.</Success>}
    </form>
  )
}

const DemonstrationForm = (props: { inference: UiStoredInference; onSent: (id: string) => void }) => {
  const [draft] = useState(() => demonstrationDraft(props.inference))
  const [text, setText] = useState(draft.text)
  const [format, setFormat] = useState<DemonstrationFormat>(draft.format)
  const [problem, setProblem] = useState<string | undefined>()
  const send = useSendFeedback(props.onSent)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setProblem(undefined)
    let value: unknown = text
    if (format === "json") {
      try {
        value = JSON.parse(text)
      } catch (error) {
        setProblem(`The demonstration is not valid JSON: ${(error as Error).message}`)
        return
      }
    }
    send.mutate({ metric_name: "demonstration", value, inference_id: props.inference.inference_id })
  }
  return (
    <form onSubmit={submit} aria-label="Demonstration feedback">
      {props.inference.type === "chat" && (
        <SelectField
          label="Demonstration format"
          value={format}
          onChange={(chosen) => setFormat(chosen as DemonstrationFormat)}
          options={[{ value: "text", label: "Plain text" }, { value: "json", label: "Content blocks (JSON)" }]}
        />
      )}
      <TextArea
        label="Demonstration"
        value={text}
        onChange={setText}
        rows={8}
        mono={format === "json"}
        hint={props.inference.type === "json" ? "JSON that fits the output schema" : "the output the inference should have given"}
      />
      <Button type="submit" kind="primary" disabled={send.isPending}>Send demonstration</Button>
      {problem !== undefined && <p role="alert" className="notice error">{problem}</p>}
      <ErrorNotice error={send.error} />
      {send.isSuccess && <Success>Demonstration {send.data.feedback_id} sent.</Success>}
    </form>
  )
}

/** The three ways to give feedback on an inference; `onSent` is told each stored feedback's id. */
export const FeedbackForms = (props: { inference: UiStoredInference; metrics: ReadonlyArray<UiMetric>; onSent: (id: string) => void }) => (
  <div className="forms">
    <MetricForm inference={props.inference} metrics={props.metrics} onSent={props.onSent} />
    <CommentForm inference={props.inference} onSent={props.onSent} />
    <DemonstrationForm inference={props.inference} onSent={props.onSent} />
  </div>
)
