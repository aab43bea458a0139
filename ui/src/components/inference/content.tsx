/**
 * An inference's content as people read it: the input's system and messages with their content
 * blocks (text, template arguments, tool calls and results, files, thoughts), and the output by
 * its type (a chat function's text, tool calls and thoughts; a json function's parsed and raw
 * output). Shared by the inference, episode and datapoint pages.
 */
import type { InputBlock, InputMessage } from "../../../../src/api/inference.ts"
import type { UiStoredInference } from "../../../../src/api/uiInferences.ts"
import { JsonView } from "../JsonView.tsx"
import { Badge, Collapsible } from "../ui.tsx"
import "./inference.css"

export type ChatOutputBlock = Extract<UiStoredInference, { type: "chat" }>["output"][number]
export type JsonOutput = Extract<UiStoredInference, { type: "json" }>["output"]

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** `text` parsed as JSON, or undefined */
export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const ToolCall = (props: { name: string | null | undefined; rawName?: string; id: string; args: unknown; rawArguments?: string }) => {
  const valid = props.name !== null && props.name !== undefined
  return (
    <div className="block">
      <div className="block-label">
        <span>Tool call</span>
        <code>{props.name ?? props.rawName}</code>
        <span className="muted">id {props.id}</span>
        {!valid && <Badge tone="warn">no such tool offered</Badge>}
      </div>
      {props.args !== undefined && props.args !== null
        ? <JsonView value={props.args} label={`arguments of ${props.name ?? props.rawName ?? "the tool call"}`} />
        : <JsonView value={props.rawArguments ?? ""} label="raw arguments" />}
    </div>
  )
}

const Thought = (props: { text: string | undefined }) => (
  <div className="block thought">
    <div className="block-label">Thought</div>
    <div className="text-block">{props.text ?? ""}</div>
  </div>
)

const Unknown = (props: { data: unknown; provider?: string | undefined }) => (
  <div className="block">
    <div className="block-label">Provider-specific block{props.provider === undefined ? "" : ` (${props.provider})`}</div>
    <JsonView value={props.data} label="provider-specific content" />
  </div>
)

/** One block of an input message. */
export const InputBlockView = (props: { block: InputBlock }) => {
  const block = props.block
  switch (block.type) {
    case "text":
      return block.arguments !== undefined
        ? (
          <div className="block">
            <div className="block-label">Template arguments</div>
            <JsonView value={block.arguments} label="template arguments" />
          </div>
        )
        : <div className="text-block">{block.text ?? ""}</div>
    case "template":
      return (
        <div className="block">
          <div className="block-label">Template <code>{block.name}</code></div>
          <JsonView value={block.arguments} label={`arguments of template ${block.name}`} />
        </div>
      )
    case "raw_text":
      return (
        <div className="block">
          <div className="block-label">Raw text (no template)</div>
          <div className="text-block">{block.value}</div>
        </div>
      )
    case "tool_call":
      return (
        <ToolCall
          name={block.name ?? block.raw_name}
          id={block.id}
          args={block.arguments ?? (block.raw_arguments === undefined ? undefined : parseJson(block.raw_arguments))}
          rawArguments={block.raw_arguments}
        />
      )
    case "tool_result":
      return (
        <div className="block">
          <div className="block-label">Tool result <code>{block.name}</code><span className="muted">id {block.id}</span></div>
          <div className="text-block">{block.result}</div>
        </div>
      )
    case "file":
      return (
        <div className="block">
          <div className="block-label">File</div>
          {block.file_type === "url"
            ? <a href={block.url} rel="noreferrer noopener" target="_blank">{block.url}</a>
            : block.file_type === "object_storage"
            ? <span>{block.mime_type}, in object storage ({block.storage_path.kind.type}): <code>{block.storage_path.path}</code></span>
            : <span>{block.mime_type}, {Math.floor(block.data.length * 3 / 4).toLocaleString()} bytes (base64)</span>}
        </div>
      )
    case "thought":
      return <Thought text={block.text} />
    case "unknown":
      return <Unknown data={block.data} provider={block.model_provider_name} />
  }
}

/** The input of an inference as sent: the system (text or template arguments) and the messages. */
export const InputView = (props: { input: unknown }) => {
  if (!isObject(props.input)) return <JsonView value={props.input} label="input" />
  const { system, messages } = props.input as { system?: unknown; messages?: ReadonlyArray<InputMessage> }
  return (
    <div>
      {system !== undefined && (
        <div className="message">
          <div className="role">system</div>
          {typeof system === "string" ? <div className="text-block">{system}</div> : <JsonView value={system} label="system template arguments" />}
        </div>
      )}
      {(messages ?? []).map((message, i) => (
        <div className="message" key={i}>
          <div className="role">{message.role}</div>
          {typeof message.content === "string"
            ? <div className="text-block">{message.content}</div>
            : message.content.map((block, j) => <InputBlockView key={j} block={block} />)}
        </div>
      ))}
      {system === undefined && (messages ?? []).length === 0 && <p className="muted">No input.</p>}
    </div>
  )
}

/** One block of a chat function's output. */
export const OutputBlockView = (props: { block: ChatOutputBlock }) => {
  const block = props.block
  switch (block.type) {
    case "text":
      return <div className="text-block">{block.text}</div>
    case "tool_call":
      return <ToolCall name={block.name} rawName={block.raw_name} id={block.id} args={block.arguments} rawArguments={block.raw_arguments} />
    case "thought":
      return <Thought text={block.text} />
    case "unknown":
      return <Unknown data={block.data} provider={block.model_provider_name} />
  }
}

/** A json function's output: its parse (null when the text was not valid JSON of the schema) and the raw text. */
export const JsonOutputView = (props: { output: JsonOutput }) => (
  <div>
    {props.output.parsed === null
      ? <p><Badge tone="bad">not valid</Badge> The output did not parse or did not fit the output schema.</p>
      : <JsonView value={props.output.parsed} label="parsed output" />}
    <Collapsible summary="Raw output">
      <div className="text-block mono">{props.output.raw}</div>
    </Collapsible>
  </div>
)

/** The output of a stored inference, rendered by its type. */
export const OutputView = (props: { inference: UiStoredInference }) =>
  props.inference.type === "json"
    ? <JsonOutputView output={props.inference.output} />
    : props.inference.output.length === 0
    ? <p className="muted">Empty output.</p>
    : <div>{props.inference.output.map((block, i) => <OutputBlockView key={i} block={block} />)}</div>

/** The output in one short line: the text, or the tool calls, or the JSON. */
export const outputSummary = (inference: UiStoredInference, max = 160): string => {
  const text = inference.type === "json"
    ? inference.output.raw
    : inference.output.map((block) =>
      block.type === "text" ? block.text : block.type === "tool_call" ? `${block.name ?? block.raw_name}(${block.raw_arguments})` : block.type === "thought" ? "" : "[…]"
    ).filter((part) => part !== "").join(" ")
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** Tags as small badges. */
export const TagList = (props: { tags: Readonly<Record<string, string>> }) => {
  const entries = Object.entries(props.tags)
  if (entries.length === 0) return <span className="muted">—</span>
  return (
    <span className="tags">
      {entries.map(([key, value]) => <Badge key={key}>{key}={value}</Badge>)}
    </span>
  )
}
