/**
 * A dataset: its live datapoints (filtered by function and tag, searched, a page at a time),
 * each linked to its editor and deletable; the dataset exported as JSON Lines, or deleted.
 * Deleting stales: the data stays readable by id (a datapoint's page still shows it).
 */
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { Link, useNavigate, useParams } from "react-router"
import type { DatapointsResponse, DeletedDatapoints, ListDatapointsRequest } from "../../../src/api/datasets.ts"
import type { Datapoint } from "../../../src/api/uiDatasets.ts"
import { api, basePath } from "../api.ts"
import { ConfirmButton } from "../components/datasets/ConfirmButton.tsx"
import { DatapointFilters, type DatapointFilterValues, noFilters } from "../components/datasets/DatapointFilters.tsx"
import { datapointPage, datasetApi, datasetKeys } from "../components/datasets/paths.ts"
import { useDatasets } from "../components/datasets/queries.ts"
import { Badge, Card, ErrorNotice, Facts, formatNumber, formatTime, Loading, Page, Pager, shortId, Success, Table } from "../components/ui.tsx"

const pageSize = 20

type Datapoints = typeof DatapointsResponse.Type
type Deleted = typeof DeletedDatapoints.Type

const listRequest = (filters: DatapointFilterValues, offset: number): ListDatapointsRequest => ({
  limit: pageSize,
  offset,
  ...(filters.functionName !== "" && { function_name: filters.functionName }),
  ...(filters.tag !== undefined && { filter: { type: "tag", key: filters.tag.key, value: filters.tag.value, comparison_operator: "=" } }),
  // the best matches first, the newest among equals
  ...(filters.search !== "" && { search_query: filters.search, order_by: [{ by: "search_relevance" }, { by: "timestamp" }] })
})

export default function Dataset() {
  const { datasetName = "" } = useParams()
  const client = useQueryClient()
  const navigate = useNavigate()
  const [filters, setFilters] = useState<DatapointFilterValues>(noFilters)
  const [offset, setOffset] = useState(0)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const summary = useDatasets()
  const dataset = summary.data?.datasets.find((candidate) => candidate.name === datasetName)
  const datapoints = useQuery({
    queryKey: [...datasetKeys.datapoints(datasetName), filters, offset],
    queryFn: () => api<Datapoints>(`${datasetApi(datasetName)}/list_datapoints`, { body: listRequest(filters, offset) }),
    placeholderData: keepPreviousData
  })

  const refresh = () => client.invalidateQueries({ queryKey: datasetKeys.all })

  const deleteDatapoint = async (id: string) => {
    setError(null)
    setNotice(null)
    try {
      const { num_deleted_datapoints } = await api<Deleted>(`${datasetApi(datasetName)}/datapoints`, { method: "DELETE", body: { ids: [id] } })
      setNotice(num_deleted_datapoints === 1 ? `Deleted datapoint ${shortId(id)}.` : `Datapoint ${shortId(id)} was already stale.`)
      await refresh()
    } catch (failure) {
      setError(failure)
    }
  }

  const deleteDataset = async () => {
    setError(null)
    setNotice(null)
    setBusy(true)
    try {
      const { num_deleted_datapoints } = await api<Deleted>(datasetApi(datasetName), { method: "DELETE" })
      await refresh()
      navigate("/datasets", { state: { notice: `Deleted dataset ${datasetName}: ${formatNumber(num_deleted_datapoints)} datapoints made stale.` } })
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }

  const live = dataset?.datapoint_count ?? 0
  const rows = datapoints.data?.datapoints ?? []
  const filtered = filters.functionName !== "" || filters.tag !== undefined || filters.search !== ""
  return (
    <Page
      title={datasetName}
      actions={
        <>
          {/* a plain link: the browser streams the file to disk (the session cookie goes along) */}
          <a className="button secondary" href={`${basePath}${datasetApi(datasetName)}/datapoints/export`} download={`${datasetName}.jsonl`}>
            Export JSONL
          </a>
          <ConfirmButton
            label="Delete dataset"
            question={`Are you sure? All ${formatNumber(live)} live datapoints become stale.`}
            confirm="Yes, delete the dataset"
            onConfirm={() => void deleteDataset()}
            busy={busy}
          />
        </>
      }
    >
      <p><Link to="/datasets">← All datasets</Link></p>
      <ErrorNotice error={summary.error} />
      {dataset !== undefined && (
        <Card>
          <Facts
            facts={[
              ["Live datapoints", formatNumber(dataset.datapoint_count)],
              ["Functions", dataset.functions.map((fn) => `${fn.function_name} (${formatNumber(fn.datapoint_count)})`).join(", ") || "—"],
              ["Last updated", formatTime(dataset.last_updated)]
            ]}
          />
        </Card>
      )}
      {summary.isSuccess && dataset === undefined && <p className="muted">No datapoint was ever stored in this dataset.</p>}
      <DatapointFilters
        functions={dataset?.functions.map((fn) => fn.function_name) ?? []}
        onApply={(next) => {
          setFilters(next)
          setOffset(0)
        }}
      />
      {notice !== null && <Success>{notice}</Success>}
      <ErrorNotice error={error} />
      <ErrorNotice error={datapoints.error} />
      {datapoints.isPending
        ? <Loading what="datapoints" />
        : (
          <>
            <Table<Datapoint>
              caption={`Datapoints of ${datasetName}`}
              rows={rows}
              rowKey={(datapoint) => datapoint.id}
              empty={filtered ? "No live datapoint matches the filters." : "No live datapoints."}
              columns={[
                {
                  header: "ID",
                  cell: (datapoint) => (
                    <Link to={datapointPage(datasetName, datapoint.id)} title={datapoint.id} className="mono">{shortId(datapoint.id)}</Link>
                  )
                },
                { header: "Name", cell: (datapoint) => datapoint.name ?? <span className="muted">—</span> },
                { header: "Function", cell: (datapoint) => datapoint.function_name },
                {
                  header: "Tags",
                  cell: (datapoint) => (
                    <span className="tags">
                      {Object.entries(datapoint.tags).map(([key, value]) => <Badge key={key}>{`${key}=${value}`}</Badge>)}
                    </span>
                  )
                },
                { header: "Updated", cell: (datapoint) => formatTime(datapoint.updated_at) },
                {
                  header: "Actions",
                  cell: (datapoint) => (
                    <ConfirmButton
                      label="Delete"
                      accessibleLabel={`Delete datapoint ${datapoint.id}`}
                      question="Delete it?"
                      confirm="Yes, delete"
                      onConfirm={() => void deleteDatapoint(datapoint.id)}
                    />
                  )
                }
              ]}
            />
            <Pager offset={offset} limit={pageSize} count={rows.length} onChange={setOffset} label="Pages of datapoints" />
          </>
        )}
    </Page>
  )
}
