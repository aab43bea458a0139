/** The Overview's tables: the split of the inferences, the metrics' means per variant with their intervals, the model calls. */
import { Link } from "react-router"
import type { UiOverview, UiOverviewMetric, UiOverviewMetricVariant, UiOverviewModel, UiOverviewSeries } from "../../../../src/api/uiOverview.ts"
import { query } from "../../api.ts"
import { formatNumber, Table } from "../ui.tsx"
import { colorOf } from "./InferenceChart.tsx"

const percent = (share: number) => `${(share * 100).toFixed(1)}%`

/** the Inferences page listing what a row counts */
const inferencesLink = (functionName: string, variantName?: string) => `/inferences${query({ function_name: functionName, variant_name: variantName })}`

export const SharesTable = (props: { overview: UiOverview; onPickFunction: (name: string) => void }) => {
  const { overview } = props
  const byVariant = overview.split_by === "variant"
  return (
    <Table<UiOverviewSeries>
      caption={byVariant ? `Inferences of ${overview.function_name} by variant` : "Inferences by function"}
      rows={overview.series}
      rowKey={(row) => row.name}
      empty="No inferences in this range."
      columns={[
        {
          header: byVariant ? "Variant" : "Function",
          cell: (row) =>
            byVariant
              ? <Link to={inferencesLink(overview.function_name!, row.name)}>{row.name}</Link>
              : (
                <span className="cell-actions">
                  <button type="button" className="link-button" onClick={() => props.onPickFunction(row.name)} aria-label={`Show the overview of ${row.name}`}>
                    {row.name}
                  </button>
                  <Link to={inferencesLink(row.name)} aria-label={`Inferences of ${row.name}`}>inferences</Link>
                </span>
              )
        },
        { header: "Inferences", cell: (row) => formatNumber(row.total), numeric: true },
        {
          header: "Share",
          cell: (row) => {
            const index = overview.series.indexOf(row)
            return (
              <span className="share">
                <span className="share-bar" aria-hidden="true">
                  <span style={{ width: percent(row.share), background: colorOf(index) }} />
                </span>
                {percent(row.share)}
              </span>
            )
          }
        }
      ]}
    />
  )
}

/** both ends with the same three decimals, whole bounds included (a Wilson interval of all-false ratings starts at 0.000) */
const interval = (variant: UiOverviewMetricVariant) =>
  variant.ci_lower === null || variant.ci_upper === null
    ? "—"
    : <span className="nowrap">{`${variant.ci_lower.toFixed(3)} – ${variant.ci_upper.toFixed(3)}`}</span>

/** the intervals of a metric's variants drawn on one scale: [0, 1] for booleans, the intervals' extent for floats */
const IntervalBar = (props: { variant: UiOverviewMetricVariant; scale: readonly [number, number] }) => {
  const [low, high] = props.scale
  const span = high - low || 1
  const at = (value: number) => `${(((value - low) / span) * 100).toFixed(2)}%`
  const { ci_lower, ci_upper, mean } = props.variant
  return (
    <span className="interval-bar" aria-hidden="true">
      {ci_lower !== null && ci_upper !== null && <span className="interval" style={{ left: at(ci_lower), width: `${(((ci_upper - ci_lower) / span) * 100).toFixed(2)}%` }} />}
      <span className="mean" style={{ left: at(mean) }} />
    </span>
  )
}

const scaleOf = (metric: UiOverviewMetric): readonly [number, number] => {
  if (metric.type === "boolean") return [0, 1]
  const values = metric.variants.flatMap((variant) => [variant.mean, variant.ci_lower ?? variant.mean, variant.ci_upper ?? variant.mean])
  return [Math.min(...values), Math.max(...values)]
}

const describeMetric = (metric: UiOverviewMetric) =>
  `${metric.type}, ${metric.level}-level` +
  (metric.optimize === null ? "" : `, ${metric.optimize === "max" ? "higher" : "lower"} is better`) +
  `; means with 95% ${metric.interval === "wilson" ? "Wilson score" : "normal (mean ± 1.96·sd/√n)"} intervals`

export const MetricTables = (props: { overview: UiOverview }) => {
  const { overview } = props
  if (overview.function_name === null) return <p className="muted">Choose a function to compare its variants' feedback.</p>
  if (overview.metrics.length === 0) return <p className="muted">No feedback on this function's inferences in the range.</p>
  return (
    <>
      {overview.metrics.map((metric) => {
        const scale = scaleOf(metric)
        return (
          <div key={`${metric.metric_name}/${metric.type}/${metric.level}`} className="overview-metric">
            <h3>{metric.metric_name}</h3>
            <p className="muted">{describeMetric(metric)}</p>
            <Table<UiOverviewMetricVariant>
              caption={`${metric.metric_name}: ${describeMetric(metric)}`}
              rows={metric.variants}
              rowKey={(row) => row.variant_name}
              columns={[
                { header: "Variant", cell: (row) => <Link to={inferencesLink(overview.function_name!, row.variant_name)}>{row.variant_name}</Link> },
                { header: "Feedback", cell: (row) => formatNumber(row.count), numeric: true },
                { header: "Mean", cell: (row) => formatNumber(row.mean), numeric: true },
                { header: "95% interval", cell: interval, numeric: true },
                { header: "Interval", cell: (row) => <IntervalBar variant={row} scale={scale} /> }
              ]}
            />
          </div>
        )
      })}
    </>
  )
}

/** milliseconds to a tenth */
const ms = (value: number) => formatNumber(Math.round(value * 10) / 10, 1)

export const ModelsTable = (props: { overview: UiOverview }) => (
  <Table<UiOverviewModel>
    caption="Model calls by model and provider"
    rows={props.overview.models}
    rowKey={(row) => `${row.model_name}\u0000${row.provider_name}`}
    empty="No model calls in this range."
    columns={[
      { header: "Model", cell: (row) => row.model_name },
      { header: "Provider", cell: (row) => row.provider_name },
      { header: "Calls", cell: (row) => formatNumber(row.calls), numeric: true },
      { header: "Cached", cell: (row) => formatNumber(row.cached_calls), numeric: true },
      { header: "Tokens in / out", cell: (row) => `${formatNumber(row.input_tokens)} / ${formatNumber(row.output_tokens)}`, numeric: true },
      { header: "Cost", cell: (row) => formatNumber(row.cost, 4), numeric: true },
      { header: "p50 ms", cell: (row) => ms(row.response_time_ms.p50), numeric: true },
      { header: "p90 ms", cell: (row) => ms(row.response_time_ms.p90), numeric: true },
      { header: "p99 ms", cell: (row) => ms(row.response_time_ms.p99), numeric: true },
      {
        header: "TTFT p50 / p90 / p99 ms",
        cell: (row) => row.ttft_ms === null ? "—" : `${ms(row.ttft_ms.p50)} / ${ms(row.ttft_ms.p90)} / ${ms(row.ttft_ms.p99)}`,
        numeric: true
      }
    ]}
  />
)

type Outcome = UiOverview["provider_outcomes"]["outcomes"][number]

export const OutcomesTable = (props: { overview: UiOverview }) => (
  <Table<Outcome>
    caption="Answered and failed provider calls by model and provider, since the gateway started"
    rows={props.overview.provider_outcomes.outcomes}
    rowKey={(row) => `${row.model}\u0000${row.provider}`}
    empty="No provider calls since the gateway started."
    columns={[
      { header: "Model", cell: (row) => row.model },
      { header: "Provider", cell: (row) => row.provider },
      { header: "Answered", cell: (row) => formatNumber(row.answered), numeric: true },
      { header: "Failed", cell: (row) => formatNumber(row.failed), numeric: true },
      { header: "Error rate", cell: (row) => `${(row.error_rate * 100).toFixed(1)}%`, numeric: true }
    ]}
  />
)
