/**
 * The stored inferences, newest first, through the public `POST /v1/inferences/list_inferences`:
 * filtered by function, variant, episode, a tag, a time range and a metric's value, a page at a
 * time. The filters and the page live in the URL, so a link (or the back button) shows the same list.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { Link, useSearchParams } from "react-router"
import type { InferencesResponse } from "../../../src/api/inferences.ts"
import type { UiStoredInference } from "../../../src/api/uiInferences.ts"
import { api } from "../api.ts"
import { outputSummary, TagList } from "../components/inference/content.tsx"
import { type FilterValues, filterValues, InferenceFilters, listRequest } from "../components/inference/filters.tsx"
import { Card, ErrorNotice, formatNumber, formatTime, Loading, Page, Pager, shortId, Table } from "../components/ui.tsx"
import { useUiConfig } from "../config.ts"

const pageSize = 25

export default function Inferences() {
  const [search, setSearch] = useSearchParams()
  const config = useUiConfig()
  const values = filterValues(search)
  const offset = Math.max(0, Number(search.get("offset")) || 0)
  const built = listRequest(values, config.data?.metrics ?? [])
  // a metric filter needs the metric's type: wait for the configuration
  const ready = values.metric === "" || config.data !== undefined
  const request = "request" in built ? { ...built.request, limit: pageSize, offset } : undefined
  const list = useQuery({
    queryKey: ["inferences", request],
    queryFn: () => api<InferencesResponse>("/v1/inferences/list_inferences", { body: request }),
    enabled: request !== undefined && ready,
    placeholderData: keepPreviousData
  })

  const apply = (next: FilterValues) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(next)) if (value !== "") params.set(key, value)
    setSearch(params)
  }
  const goTo = (nextOffset: number) => {
    const params = new URLSearchParams(search)
    if (nextOffset === 0) params.delete("offset")
    else params.set("offset", String(nextOffset))
    setSearch(params)
  }
  const filterKey = new URLSearchParams([...search].filter(([key]) => key !== "offset")).toString()

  return (
    <Page title="Inferences">
      <Card title="Filters">
        {/* keyed by the URL's filters: the form starts again from them after a navigation */}
        <InferenceFilters key={filterKey} initial={values} config={config.data} onApply={apply} />
        {"problem" in built && <p role="alert" className="notice error">{built.problem}</p>}
        <ErrorNotice error={config.error} />
      </Card>
      <ErrorNotice error={list.error} />
      {list.isPending && request !== undefined ? <Loading what="inferences" /> : (
        <>
          <Table<UiStoredInference>
            caption="Inferences, newest first"
            rows={list.data?.inferences ?? []}
            rowKey={(inference) => inference.inference_id}
            empty="No inference matches these filters."
            columns={[
              { header: "Inference", cell: (inference) => <Link to={`/inferences/${inference.inference_id}`} className="mono">{shortId(inference.inference_id)}</Link> },
              { header: "Function", cell: (inference) => inference.function_name },
              { header: "Variant", cell: (inference) => inference.variant_name },
              { header: "Episode", cell: (inference) => <Link to={`/episodes/${inference.episode_id}`} className="mono">{shortId(inference.episode_id)}</Link> },
              { header: "Time", cell: (inference) => formatTime(inference.timestamp) },
              { header: "Latency (ms)", numeric: true, cell: (inference) => formatNumber(inference.processing_time_ms) },
              { header: "Output", cell: (inference) => <span className="muted">{outputSummary(inference, 80)}</span> },
              { header: "Tags", cell: (inference) => <TagList tags={inference.tags} /> }
            ]}
          />
          <Pager offset={offset} limit={pageSize} count={list.data?.inferences.length ?? 0} onChange={goTo} label="Pages of inferences" />
        </>
      )}
    </Page>
  )
}
