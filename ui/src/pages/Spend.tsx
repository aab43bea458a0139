/**
 * Spend (`GET /v1/spend`): what the stored model calls of the workspace cost, per UTC day, week
 * (from Monday) or month, for the whole workspace, one API key or one tag, as a bar chart drawn by
 * uPlot, a total, and the periods as a table. Admins only, as the route is.
 */
import { useQuery } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import "../components/overview/overview.css"
import type { SpendAnswer, SpendPeriodJson } from "../../../src/api/spend.ts"
import { api, query } from "../api.ts"
import { Card, Collapsible, ErrorNotice, Facts, Loading, Page, SelectField, Table, TextField } from "../components/ui.tsx"

type Granularity = SpendAnswer["granularity"]
type ScopeKind = "workspace" | "api_key" | "tag"

/** an amount in the providers' currency: small per-call costs keep their digits */
export const formatCost = (cost: number) => cost.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })

/** a period's start as text: its day (UTC), or its month */
const formatPeriod = (iso: string, granularity: Granularity) => (granularity === "month" ? iso.slice(0, 7) : iso.slice(0, 10))

const height = 240

/** half a period, in seconds: the x axis reaches that far beyond the first and last bars, so that they show whole */
const halfPeriod: Record<Granularity, number> = { day: 43_200, week: 302_400, month: 1_314_000 }

const SpendPlot = (props: { spend: SpendAnswer; label: string }) => {
  const frame = useRef<HTMLDivElement>(null)
  const { spend } = props
  useEffect(() => {
    const element = frame.current
    if (element === null) return
    const xs = spend.periods.map((period) => Date.parse(period.period_start) / 1000)
    const plot = new uPlot({
      width: Math.max(200, element.clientWidth),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // periods are UTC days, weeks and months: the axis says UTC too
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { x: { time: true, range: (_plot, min, max) => [min - halfPeriod[spend.granularity], max + halfPeriod[spend.granularity]] }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ stroke: "#57606a", grid: { stroke: "#eaeef2" } }, { stroke: "#57606a", grid: { stroke: "#eaeef2" }, size: 64 }],
      series: [{}, { label: "cost", stroke: "#0b57d0", fill: "#0b57d055", width: 1, paths: uPlot.paths.bars!({ size: [0.7, 48] }), points: { show: false } }]
    }, [xs, spend.periods.map((period) => period.cost)], element)
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.clientWidth), height }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [spend])
  return <div ref={frame} className="overview-plot" role="img" aria-label={props.label} />
}

const scopeText = (scope: SpendAnswer["scope"]) =>
  scope.kind === "workspace" ? `workspace ${scope.value}` : scope.kind === "api_key" ? `API key ${scope.value}` : `tag ${scope.key} = ${scope.value}`

export default function Spend() {
  const [granularity, setGranularity] = useState<Granularity>("day")
  const [scopeKind, setScopeKind] = useState<ScopeKind>("workspace")
  const [apiKey, setApiKey] = useState("")
  const [tagKey, setTagKey] = useState("")
  const [tagValue, setTagValue] = useState("")
  const scope = scopeKind === "api_key"
    ? (apiKey.trim() === "" ? undefined : { api_key: apiKey.trim() })
    : scopeKind === "tag"
    ? (tagKey.trim() === "" || tagValue === "" ? undefined : { tag_key: tagKey.trim(), tag_value: tagValue })
    : {}
  const spend = useQuery({
    queryKey: ["spend", granularity, scope],
    queryFn: () => api<SpendAnswer>(`/v1/spend${query({ granularity, ...scope })}`),
    enabled: scope !== undefined
  })
  const data = spend.data
  const summary = data === undefined
    ? ""
    : `Spend per ${data.granularity} of ${scopeText(data.scope)} from ${data.from.slice(0, 10)} to ${data.to.slice(0, 10)} UTC: ${formatCost(data.total.cost)} in ${data.total.calls} calls.`
  return (
    <Page title="Spend">
      <Card title="Whose spend">
        <div className="row">
          <SelectField
            label="Per"
            value={granularity}
            onChange={(value) => setGranularity(value as Granularity)}
            options={[{ value: "day", label: "day" }, { value: "week", label: "week (from Monday)" }, { value: "month", label: "month" }]}
          />
          <SelectField
            label="Scope"
            value={scopeKind}
            onChange={(value) => setScopeKind(value as ScopeKind)}
            options={[{ value: "workspace", label: "the whole workspace" }, { value: "api_key", label: "an API key" }, { value: "tag", label: "a tag" }]}
          />
          {scopeKind === "api_key" && <TextField label="API key" value={apiKey} onChange={setApiKey} placeholder="its public id" />}
          {scopeKind === "tag" && (
            <>
              <TextField label="Tag key" value={tagKey} onChange={setTagKey} placeholder="team" />
              <TextField label="Tag value" value={tagValue} onChange={setTagValue} placeholder="search" />
            </>
          )}
        </div>
      </Card>
      <Card title="Spend">
        {scope === undefined && <p className="muted">Name the {scopeKind === "api_key" ? "API key" : "tag's key and value"} to read its spend.</p>}
        {scope !== undefined && spend.isPending && <Loading what="the spend" />}
        <ErrorNotice error={spend.error} />
        {data !== undefined && (
          <figure className="overview-chart">
            <Facts
              facts={[
                ["Total", <strong key="total" data-testid="spend-total">{formatCost(data.total.cost)}</strong>],
                ["Calls", data.total.calls.toLocaleString()],
                ["Scope", scopeText(data.scope)],
                ["From", `${data.from.slice(0, 16).replace("T", " ")} UTC`],
                ["To", `${data.to.slice(0, 16).replace("T", " ")} UTC`]
              ]}
            />
            <SpendPlot spend={data} label={summary} />
            <figcaption className="muted">Cost per {data.granularity} (UTC), the sum of the stored model calls' costs.</figcaption>
            <Collapsible summary="The chart's data as a table">
              <Table<SpendPeriodJson>
                caption={`Spend per ${data.granularity} (periods without calls are left out)`}
                rows={data.periods.filter((period) => period.calls > 0)}
                rowKey={(period) => period.period_start}
                empty="No calls in this range."
                columns={[
                  { header: `${data.granularity[0].toUpperCase()}${data.granularity.slice(1)} (UTC)`, cell: (period) => formatPeriod(period.period_start, data.granularity) },
                  { header: "Cost", cell: (period) => formatCost(period.cost), numeric: true },
                  { header: "Calls", cell: (period) => period.calls.toLocaleString(), numeric: true }
                ]}
              />
            </Collapsible>
          </figure>
        )}
      </Card>
    </Page>
  )
}
