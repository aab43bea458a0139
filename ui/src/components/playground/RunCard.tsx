/** One run of the playground as it streams: its output blocks, then its usage, timing and stored inference. */
import { Link } from "react-router"
import { Badge, Facts, formatNumber } from "../ui.tsx"
import type { Run } from "./runs.ts"

const tones = { running: "warn", done: "good", error: "bad", stopped: "neutral" } as const

export const RunCard = (props: { run: Run; stored: boolean }) => {
  const { run } = props
  const title = run.target.kind === "variant" ? `Variant ${run.target.name}` : `Model ${run.target.name}`
  return (
    <section className="card run" aria-label={title} aria-busy={run.status === "running"}>
      <h2 className="card-title">
        {title} <Badge tone={tones[run.status]}>{run.status}</Badge>
      </h2>
      <div className="run-output">
        {run.blocks.length === 0 && run.status === "running" && <p className="muted">Waiting for the first chunk…</p>}
        {run.blocks.map((block) => (
          <div key={`${block.type}:${block.id}`} className={`block ${block.type}`}>
            {block.type === "tool_call" && <p className="muted">tool call {block.name ?? ""}</p>}
            {block.type === "thought" && <p className="muted">thought</p>}
            <pre className="output">{block.text}</pre>
          </div>
        ))}
      </div>
      {run.error !== undefined && <p role="alert" className="notice error">{run.error}</p>}
      {run.status !== "running" && (
        <Facts facts={[
          ["Input tokens", formatNumber(run.usage?.input_tokens)],
          ["Output tokens", formatNumber(run.usage?.output_tokens)],
          ["Finish reason", run.finishReason ?? "—"],
          ["First chunk", run.firstChunkMs === undefined ? "—" : `${run.firstChunkMs} ms`],
          ["Total", run.totalMs === undefined ? "—" : `${run.totalMs} ms`],
          ["Inference", run.inferenceId === undefined ? "—" : props.stored
            ? <Link to={`/inferences/${run.inferenceId}`}>{run.inferenceId}</Link>
            : <span title="a dry run stores nothing">{run.inferenceId} (not stored)</span>]
        ]} />
      )}
    </section>
  )
}
