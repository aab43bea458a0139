/**
 * Inferences over time, one line per variant (or function), drawn by uPlot on a canvas. The
 * canvas is an image to assistive technology, named by a summary of what it shows; its numbers
 * are also in a table below it, folded away, and the legend is plain text.
 */
import { useEffect, useRef } from "react"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import type { UiOverview } from "../../../../src/api/uiOverview.ts"
import { Collapsible, type Column, formatNumber, Table } from "../ui.tsx"

/** distinct hues, each at least 3:1 against the white card */
export const seriesColors = ["#0b57d0", "#b3261e", "#146c2e", "#8a4b00", "#6b3fa0", "#00696f", "#5f6368", "#a0307a"]

export const colorOf = (index: number) => seriesColors[index % seriesColors.length]

/** a bucket's start as the chart's text shows it: UTC, to the minute (the day alone for daily buckets) */
export const formatBucket = (iso: string, bucket: UiOverview["bucket"]) =>
  bucket === "day" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`

const percent = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.01 ? 1 : 0)}%`

/** what the chart shows, in a sentence or three */
export const chartSummary = (overview: UiOverview): string => {
  const { bucket, bucket_starts, series } = overview
  const span = `from ${formatBucket(overview.from, "minute")} to ${formatBucket(overview.to, "minute")} UTC`
  if (overview.total_inferences === 0) return `Inferences per ${bucket} ${span}: none.`
  const parts = series.map((line) => `${line.name} ${line.total.toLocaleString()} (${percent(line.share)})`)
  let busiest = 0
  let busiestCount = -1
  bucket_starts.forEach((_, i) => {
    const count = series.reduce((sum, line) => sum + line.counts[i], 0)
    if (count > busiestCount) [busiest, busiestCount] = [i, count]
  })
  return `Inferences per ${bucket} by ${overview.split_by} ${span}, ${overview.total_inferences.toLocaleString()} in all: ${parts.join(", ")}. ` +
    `The busiest ${bucket} began ${formatBucket(bucket_starts[busiest], bucket)} with ${busiestCount.toLocaleString()}.`
}

const height = 260

const Plot = (props: { overview: UiOverview; label: string }) => {
  const frame = useRef<HTMLDivElement>(null)
  const { overview } = props
  useEffect(() => {
    const element = frame.current
    if (element === null) return
    const xs = overview.bucket_starts.map((iso) => Date.parse(iso) / 1000)
    const plot = new uPlot({
      width: Math.max(200, element.clientWidth),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // buckets are aligned on UTC days and hours: the axis says UTC too
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { y: { range: (_plot, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] } },
      axes: [{ stroke: "#57606a", grid: { stroke: "#eaeef2" } }, { stroke: "#57606a", grid: { stroke: "#eaeef2" }, size: 48 }],
      series: [{}, ...overview.series.map((line, i) => ({ label: line.name, stroke: colorOf(i), width: 2, points: { size: 5 } }))]
    }, [xs, ...overview.series.map((line) => [...line.counts])], element)
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.clientWidth), height }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [overview])
  return <div ref={frame} className="overview-plot" role="img" aria-label={props.label} />
}

interface BucketRow {
  readonly start: string
  readonly counts: ReadonlyArray<number>
}

export const InferenceChart = (props: { overview: UiOverview }) => {
  const { overview } = props
  const summary = chartSummary(overview)
  if (overview.total_inferences === 0) return <p className="muted">{summary}</p>
  const rows: ReadonlyArray<BucketRow> = overview.bucket_starts
    .map((start, i) => ({ start, counts: overview.series.map((line) => line.counts[i]) }))
    .filter((row) => row.counts.some((count) => count > 0))
  const columns: ReadonlyArray<Column<BucketRow>> = [
    { header: `${overview.bucket[0].toUpperCase()}${overview.bucket.slice(1)} (UTC)`, cell: (row) => formatBucket(row.start, overview.bucket) },
    ...overview.series.map((line, i): Column<BucketRow> => ({ header: line.name, cell: (row) => formatNumber(row.counts[i]), numeric: true }))
  ]
  return (
    <figure className="overview-chart">
      <Plot overview={overview} label={summary} />
      <figcaption>
        <ul className="chart-legend" aria-label={`Lines by ${overview.split_by}`}>
          {overview.series.map((line, i) => (
            <li key={line.name}>
              <span className="swatch" style={{ background: colorOf(i) }} aria-hidden="true" />
              {line.name} <span className="muted">{line.total.toLocaleString()}</span>
            </li>
          ))}
        </ul>
        <span className="muted">Inferences per {overview.bucket}; times in UTC.</span>
      </figcaption>
      <Collapsible summary="The chart's data as a table">
        <Table
          caption={`Inferences per ${overview.bucket} by ${overview.split_by} (buckets without any are left out)`}
          columns={columns}
          rows={rows}
          rowKey={(row) => row.start}
        />
      </Collapsible>
    </figure>
  )
}
