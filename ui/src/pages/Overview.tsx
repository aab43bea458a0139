/**
 * The Overview: for one function (or all), over a time range, the inferences over time by variant,
 * the variants' shares, each metric's mean per variant with its 95% interval, and the model calls
 * per model and provider with their latency percentiles (GET /v1/ui/overview). The choices live in
 * the address, so a view can be bookmarked and shared.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { useSearchParams } from "react-router"
import type { UiOverview } from "../../../src/api/uiOverview.ts"
import { api, query } from "../api.ts"
import { InferenceChart } from "../components/overview/InferenceChart.tsx"
import { OverviewFilters, type OverviewSelection } from "../components/overview/OverviewFilters.tsx"
import { MetricTables, ModelsTable, OutcomesTable, SharesTable } from "../components/overview/OverviewTables.tsx"
import { type RangeChoice, rangePresets, resolveRange, toLocalInput } from "../components/overview/range.ts"
import { Card, ErrorNotice, Facts, formatNumber, formatTime, Loading, Page } from "../components/ui.tsx"
import "../components/overview/overview.css"

const rangeChoices: ReadonlyArray<string> = [...rangePresets.map((preset) => preset.value), "custom"]
const bucketValues: ReadonlyArray<string> = ["minute", "hour", "day"]

const useSelection = (): [OverviewSelection, (change: Partial<OverviewSelection>) => void] => {
  const [params, setParams] = useSearchParams()
  const range = params.get("range") ?? "day"
  const selection: OverviewSelection = {
    functionName: params.get("function_name") ?? "",
    range: (rangeChoices.includes(range) ? range : "day") as RangeChoice,
    customFrom: params.get("from") ?? "",
    customTo: params.get("to") ?? "",
    bucket: (bucketValues.includes(params.get("bucket") ?? "") ? params.get("bucket") : "") as OverviewSelection["bucket"]
  }
  const change = (update: Partial<OverviewSelection>) => {
    const next = { ...selection, ...update }
    // a custom range starts from the last 24 hours, for the user to adjust
    if (update.range === "custom" && next.customFrom === "" && next.customTo === "") {
      const now = Date.now()
      Object.assign(next, { customFrom: toLocalInput(now - 86_400_000), customTo: toLocalInput(now) })
    }
    const custom = next.range === "custom"
    setParams(
      new URLSearchParams(query({
        function_name: next.functionName,
        range: next.range === "day" ? undefined : next.range,
        from: custom ? next.customFrom : undefined,
        to: custom ? next.customTo : undefined,
        bucket: next.bucket
      }).slice(1)),
      { replace: true }
    )
  }
  return [selection, change]
}

export default function Overview() {
  const [selection, change] = useSelection()
  const resolved = resolveRange(selection.range, { from: selection.customFrom, to: selection.customTo }, selection.bucket, Date.now())
  const problem = "problem" in resolved ? resolved.problem : undefined
  const overview = useQuery({
    queryKey: ["ui-overview", selection],
    queryFn: ({ signal }) => {
      // presets end now: resolved again when asked, not when the page was drawn
      const range = resolveRange(selection.range, { from: selection.customFrom, to: selection.customTo }, selection.bucket, Date.now())
      if ("problem" in range) throw new Error(range.problem)
      const search = query({
        function_name: selection.functionName,
        from: new Date(range.from).toISOString(),
        to: new Date(range.to).toISOString(),
        bucket: range.bucket
      })
      return api<UiOverview>(`/v1/ui/overview${search}`, { signal })
    },
    enabled: problem === undefined,
    placeholderData: keepPreviousData
  })
  const data = overview.data
  return (
    <Page title="Overview">
      <Card>
        <OverviewFilters selection={selection} functions={data?.functions ?? []} onChange={change} />
        {problem !== undefined && <p role="alert" className="notice error">{problem}</p>}
      </Card>
      <p role="status" className="muted overview-status">{overview.isFetching ? "Updating…" : ""}</p>
      {overview.isError && <ErrorNotice error={overview.error} />}
      {overview.isPending && problem === undefined && <Loading what="the overview" />}
      {data !== undefined && (
        <>
          <div className="overview-facts">
            <Facts
              facts={[
                ["Function", data.function_name ?? "all functions"],
                ["Inferences", formatNumber(data.total_inferences)],
                ["From", formatTime(data.from)],
                ["To", formatTime(data.to)],
                ["Bucket", data.bucket]
              ]}
            />
          </div>
          <Card title="Inferences over time">
            <InferenceChart overview={data} />
          </Card>
          <div className="grid">
            <Card title={data.split_by === "variant" ? "Variant shares" : "Function shares"}>
              <SharesTable overview={data} onPickFunction={(functionName) => change({ functionName })} />
            </Card>
            <Card title="Feedback by variant">
              <MetricTables overview={data} />
            </Card>
          </div>
          <Card title="Models and providers">
            <p className="muted">
              The calls stored with the range's inferences, answered ones only (a failed provider call is not stored: error rates are
              below). Latency is the provider's response time; time to first token is of streamed calls.
            </p>
            <ModelsTable overview={data} />
          </Card>
          <Card title="Error rates by model and provider">
            <p className="muted">
              Counted by this gateway process since it started ({formatTime(data.provider_outcomes.since)}), whatever the range: the
              figures of <code>gateway_provider_errors_total</code> and <code>gateway_inference_duration_seconds</code> on <code>/metrics</code>.
            </p>
            <OutcomesTable overview={data} />
          </Card>
        </>
      )}
    </Page>
  )
}
