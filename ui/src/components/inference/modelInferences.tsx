/**
 * The model calls of an inference: each folded away with its figures, and inside, the raw
 * request the gateway sent and the raw response it received (highlighted JSON), the messages
 * as the model saw them and its output blocks.
 */
import type { UiModelInference } from "../../../../src/api/uiInferences.ts"
import { JsonView } from "../JsonView.tsx"
import { Badge, Collapsible, Facts, formatNumber, formatTime } from "../ui.tsx"

const ModelInference = (props: { call: UiModelInference; open: boolean }) => {
  const { call } = props
  return (
    <Collapsible
      open={props.open}
      summary={
        <>
          {call.model_name} · {call.model_provider_name} · {formatNumber(call.response_time_ms)} ms · {call.input_tokens}+{call.output_tokens} tokens
          {call.cached && <> <Badge tone="warn">cached</Badge></>}
        </>
      }
    >
      <Facts
        facts={[
          ["Model", call.model_name],
          ["Provider", call.model_provider_name],
          ["Response time", `${formatNumber(call.response_time_ms)} ms`],
          ["Time to first token", call.ttft_ms === null ? "—" : `${formatNumber(call.ttft_ms)} ms`],
          ["Input tokens", formatNumber(call.input_tokens)],
          ["Output tokens", formatNumber(call.output_tokens)],
          ["Cached input tokens", formatNumber(call.cached_input_tokens)],
          ["Cost", call.cost === null ? "—" : formatNumber(call.cost, 6)],
          ["Finish reason", call.finish_reason ?? "—"],
          ["Served from the cache", call.cached ? "yes" : "no"],
          ["Time", formatTime(call.timestamp)],
          ["Id", <code key="id">{call.model_inference_id}</code>]
        ]}
      />
      <Collapsible summary="Raw request">
        <JsonView value={call.raw_request} label={`raw request to ${call.model_provider_name}`} />
      </Collapsible>
      <Collapsible summary="Raw response">
        <JsonView value={call.raw_response} label={`raw response of ${call.model_provider_name}`} />
      </Collapsible>
      <Collapsible summary="Messages sent (after templates)">
        {call.system !== null && <JsonView value={call.system} label="system sent" />}
        <JsonView value={call.input_messages} label="messages sent" />
      </Collapsible>
      <Collapsible summary="Model output">
        <JsonView value={call.output} label="model output blocks" />
      </Collapsible>
    </Collapsible>
  )
}

export const ModelInferences = (props: { calls: ReadonlyArray<UiModelInference> }) =>
  props.calls.length === 0
    ? <p className="muted">No model call is stored for this inference.</p>
    : <div>{props.calls.map((call) => <ModelInference key={call.model_inference_id} call={call} open={props.calls.length === 1} />)}</div>

/** An inference's usage and cost: the sums over its model calls (cost only when every call had one). */
export const usageOf = (calls: ReadonlyArray<UiModelInference>) => ({
  inputTokens: calls.reduce((sum, call) => sum + call.input_tokens, 0),
  outputTokens: calls.reduce((sum, call) => sum + call.output_tokens, 0),
  cost: calls.length > 0 && calls.every((call) => call.cost !== null) ? calls.reduce((sum, call) => sum + call.cost!, 0) : undefined
})
