/**
 * One episode (`GET /v1/ui/episodes/:id`): its inferences in the order they ran, each with its
 * output and the feedback on it, and the feedback on the episode as a whole.
 */
import { useQuery } from "@tanstack/react-query"
import { Link, useParams } from "react-router"
import type { UiEpisode } from "../../../src/api/uiInferences.ts"
import { api } from "../api.ts"
import { OutputView } from "../components/inference/content.tsx"
import { FeedbackTable } from "../components/inference/feedback.tsx"
import { Card, ErrorNotice, Facts, formatNumber, formatTime, Loading, Page, shortId } from "../components/ui.tsx"

export default function Episode() {
  const { episodeId = "" } = useParams()
  const episode = useQuery({
    queryKey: ["ui-episode", episodeId],
    queryFn: () => api<UiEpisode>(`/v1/ui/episodes/${encodeURIComponent(episodeId)}`)
  })
  if (episode.isPending) return <Page title="Episode"><Loading what="the episode" /></Page>
  if (episode.isError) return <Page title="Episode"><ErrorNotice error={episode.error} /></Page>
  const { inferences, feedback, truncated } = episode.data
  const first = inferences[0]
  const last = inferences[inferences.length - 1]
  return (
    <Page title="Episode">
      <Card>
        <Facts
          facts={[
            ["Id", <code key="id">{episode.data.episode_id}</code>],
            ["Inferences", `${inferences.length}${truncated ? " (the latest)" : ""}`],
            ["Functions", [...new Set(inferences.map((inference) => inference.function_name))].join(", ")],
            ["Started", formatTime(first?.timestamp)],
            ["Last inference", formatTime(last?.timestamp)]
          ]}
        />
        {truncated && <p className="notice error" role="status">This episode holds more inferences than a page shows: these are its latest {inferences.length}.</p>}
      </Card>
      <Card title="Feedback on the episode">
        <FeedbackTable caption="Feedback on the episode" feedback={feedback} />
      </Card>
      <h2>Inferences in order</h2>
      <ol className="episode-steps">
        {inferences.map((inference, i) => (
          <li key={inference.inference_id}>
            <Card>
              <h3 className="step-title">
                <span>{i + 1}.</span>
                <Link to={`/inferences/${inference.inference_id}`}>
                  {inference.function_name} · {inference.variant_name} · <span className="mono">{shortId(inference.inference_id)}</span>
                </Link>
                <span className="muted">{formatTime(inference.timestamp)} · {formatNumber(inference.processing_time_ms)} ms</span>
              </h3>
              <OutputView inference={inference} />
              <FeedbackTable caption={`Feedback on inference ${i + 1}`} feedback={inference.feedback ?? []} />
            </Card>
          </li>
        ))}
      </ol>
    </Page>
  )
}
