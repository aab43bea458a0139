/**
 * One inference (`GET /v1/ui/inferences/:id`): what it was (function, variant, episode, time,
 * latency, usage, cost, tags), its input and output rendered, its model calls with their raw
 * request and response, its feedback; and the actions on it: give feedback, add it to a dataset.
 * Feedback is written through the gateway's write queue: the page asks again until it shows.
 */
import { useQuery } from "@tanstack/react-query"
import { useState } from "react"
import { Link, useParams } from "react-router"
import type { UiInferenceDetails } from "../../../src/api/uiInferences.ts"
import { api } from "../api.ts"
import { AddToDataset } from "../components/inference/AddToDataset.tsx"
import { InputView, OutputView, TagList } from "../components/inference/content.tsx"
import { FeedbackForms, FeedbackTable } from "../components/inference/feedback.tsx"
import { ModelInferences, usageOf } from "../components/inference/modelInferences.tsx"
import { JsonView } from "../components/JsonView.tsx"
import { Card, Collapsible, ErrorNotice, Facts, formatNumber, formatTime, Loading, Page, shortId } from "../components/ui.tsx"
import { useUiConfig } from "../config.ts"

const has = (details: UiInferenceDetails | undefined, id: string) =>
  details !== undefined && [...details.feedback, ...details.episode_feedback].some((feedback) => feedback.feedback_id === id)

export default function Inference() {
  const { inferenceId = "" } = useParams()
  const config = useUiConfig()
  // feedback sent from this page and not read back yet
  const [awaited, setAwaited] = useState<ReadonlyArray<string>>([])
  const details = useQuery({
    queryKey: ["ui-inference", inferenceId],
    queryFn: () => api<UiInferenceDetails>(`/v1/ui/inferences/${encodeURIComponent(inferenceId)}`),
    refetchInterval: (query) => awaited.some((id) => !has(query.state.data, id)) ? 300 : false
  })
  if (details.isPending) return <Page title="Inference"><Loading what="the inference" /></Page>
  if (details.isError) return <Page title="Inference"><ErrorNotice error={details.error} /></Page>
  const { inference, model_inferences, feedback, episode_feedback } = details.data
  const usage = usageOf(model_inferences)
  const waiting = awaited.filter((id) => !has(details.data, id))
  return (
    <Page title="Inference">
      <Card>
        <Facts
          facts={[
            ["Id", <code key="id">{inference.inference_id}</code>],
            ["Function", <Link key="f" to={`/inferences?function_name=${encodeURIComponent(inference.function_name)}`}>{inference.function_name}</Link>],
            ["Variant", inference.variant_name],
            ["Episode", <Link key="e" to={`/episodes/${inference.episode_id}`}>{shortId(inference.episode_id)}</Link>],
            ["Time", formatTime(inference.timestamp)],
            ["Latency", `${formatNumber(inference.processing_time_ms)} ms`],
            ["Time to first token", inference.ttft_ms === null ? "—" : `${formatNumber(inference.ttft_ms)} ms`],
            ["Usage", `${formatNumber(usage.inputTokens)} in, ${formatNumber(usage.outputTokens)} out`],
            ["Cost", usage.cost === undefined ? "—" : formatNumber(usage.cost, 6)],
            ["Tags", <TagList key="t" tags={inference.tags} />]
          ]}
        />
      </Card>
      <div className="side-by-side">
        <Card title="Input">
          <InputView input={inference.input} />
        </Card>
        <Card title={inference.type === "json" ? "Output (JSON)" : "Output"}>
          <OutputView inference={inference} />
        </Card>
      </div>
      <Card title="Feedback">
        <FeedbackTable caption="Feedback on this inference" feedback={feedback} />
        {episode_feedback.length > 0 && (
          <>
            <h3>On its episode</h3>
            <FeedbackTable caption="Feedback on its episode" feedback={episode_feedback} />
          </>
        )}
        {waiting.length > 0 && <p className="muted" role="status">Storing {waiting.length} feedback…</p>}
      </Card>
      <Card title="Add feedback">
        {config.isError
          ? <ErrorNotice error={config.error} />
          : (
            <FeedbackForms
              inference={inference}
              metrics={config.data?.metrics ?? []}
              onSent={(id) => setAwaited((ids) => [...ids, id])}
            />
          )}
      </Card>
      <Card title="Add to a dataset">
        <AddToDataset inferenceId={inference.inference_id} />
      </Card>
      <Card title="Model inferences">
        <ModelInferences calls={model_inferences} />
      </Card>
      <Card title="Parameters">
        <Collapsible summary="Inference parameters">
          <JsonView value={inference.inference_params} label="inference parameters" />
        </Collapsible>
        {inference.type === "chat"
          ? (
            <Collapsible summary="Tools offered">
              <JsonView value={inference.tool_params} label="tool parameters" />
            </Collapsible>
          )
          : (
            <Collapsible summary="Output schema">
              <JsonView value={inference.output_schema} label="output schema" />
            </Collapsible>
          )}
      </Card>
    </Page>
  )
}
