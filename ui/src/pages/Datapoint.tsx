/**
 * A datapoint version: what it holds, an editor while it is live (saving makes a new version,
 * and the page moves to it), and the datapoint's history: every version, the stale ones marked.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query"
import { Link, useLocation, useNavigate, useParams } from "react-router"
import type { DatapointHistory } from "../../../src/api/uiDatasets.ts"
import { api } from "../api.ts"
import { DatapointEditor } from "../components/datasets/DatapointEditor.tsx"
import { datapointPage, datasetKeys, datasetPage, historyApi } from "../components/datasets/paths.ts"
import { VersionHistory } from "../components/datasets/VersionHistory.tsx"
import { JsonView } from "../components/JsonView.tsx"
import { Badge, Card, Collapsible, ErrorNotice, Facts, formatTime, Loading, Page, Success } from "../components/ui.tsx"

export default function Datapoint() {
  const { datasetName = "", datapointId = "" } = useParams()
  const client = useQueryClient()
  const navigate = useNavigate()
  // set by the editor's save, which navigated here
  const saved = (useLocation().state as { savedFrom?: string } | null)?.savedFrom
  const history = useQuery({
    queryKey: datasetKeys.history(datasetName, datapointId),
    queryFn: () => api<DatapointHistory>(historyApi(datasetName, datapointId))
  })
  const versions = history.data?.versions ?? []
  const shown = versions.find((version) => version.id === datapointId.toLowerCase())
  const live = versions.find((version) => version.staled_at === null)

  const onSaved = async (newId: string) => {
    await client.invalidateQueries({ queryKey: datasetKeys.all })
    navigate(datapointPage(datasetName, newId), { state: { savedFrom: datapointId } })
  }

  return (
    <Page title="Datapoint">
      <p><Link to={datasetPage(datasetName)}>← Dataset {datasetName}</Link></p>
      <ErrorNotice error={history.error} />
      {history.isPending && <Loading what="the datapoint" />}
      {saved !== undefined && shown !== undefined && (
        <Success>Saved as a new version. The previous version is stale and kept in the history below.</Success>
      )}
      {shown !== undefined && (
        <>
          <Card>
            <Facts
              facts={[
                ["ID", <span className="mono">{shown.id}</span>],
                ["Status", shown.staled_at === null ? <Badge tone="good">live</Badge> : <Badge tone="warn">stale since {formatTime(shown.staled_at)}</Badge>],
                ["Dataset", <Link to={datasetPage(shown.dataset_name)}>{shown.dataset_name}</Link>],
                ["Function", `${shown.function_name} (${shown.type})`],
                ["Name", shown.name ?? "—"],
                ["Created", formatTime(shown.created_at)],
                ["Updated", formatTime(shown.updated_at)],
                ["Source inference", shown.source_inference_id === null ? "—" : <Link className="mono" to={`/inferences/${shown.source_inference_id}`}>{shown.source_inference_id}</Link>],
                ["Episode", shown.episode_id === null ? "—" : <Link className="mono" to={`/episodes/${shown.episode_id}`}>{shown.episode_id}</Link>]
              ]}
            />
          </Card>
          {shown.staled_at === null
            ? <DatapointEditor key={shown.id} datapoint={shown} onSaved={(newId) => void onSaved(newId)} />
            : (
              <Card title="Contents">
                <p className="notice warn" role="note">
                  This version is stale: it can be read, not edited.{" "}
                  {live !== undefined ? <Link to={datapointPage(datasetName, live.id)}>Open the live version</Link> : "The datapoint was deleted."}
                </p>
                <div className="side-by-side">
                  <div><h3>Input</h3><JsonView value={shown.input} label="Input" /></div>
                  <div><h3>Output</h3><JsonView value={shown.output} label="Output" /></div>
                </div>
              </Card>
            )}
          <VersionHistory versions={versions} shownId={shown.id} />
          <Collapsible summary="Every field (JSON)">
            <JsonView value={shown} label="The datapoint version as the gateway answers it" />
          </Collapsible>
        </>
      )}
    </Page>
  )
}
