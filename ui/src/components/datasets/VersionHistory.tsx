/** The versions of a datapoint, newest first: which one is live, when each became stale. */
import { Link } from "react-router"
import type { Datapoint } from "../../../../src/api/uiDatasets.ts"
import { Badge, Card, formatTime, shortId, Table } from "../ui.tsx"
import { datapointPage } from "./paths.ts"

export const VersionHistory = (props: { versions: ReadonlyArray<Datapoint>; shownId: string }) => (
  <Card title="History">
    <Table<Datapoint>
      caption="Versions of this datapoint, newest first"
      rows={props.versions}
      rowKey={(version) => version.id}
      columns={[
        {
          header: "Version",
          cell: (version) =>
            version.id === props.shownId
              ? <span className="mono" title={version.id}>{shortId(version.id)} (shown)</span>
              : <Link className="mono" title={version.id} to={datapointPage(version.dataset_name, version.id)}>{shortId(version.id)}</Link>
        },
        {
          header: "Status",
          cell: (version) => version.staled_at === null ? <Badge tone="good">live</Badge> : <Badge tone="warn">stale</Badge>
        },
        { header: "Name", cell: (version) => version.name ?? <span className="muted">—</span> },
        { header: "Created", cell: (version) => formatTime(version.created_at) },
        { header: "Stale since", cell: (version) => formatTime(version.staled_at) }
      ]}
    />
  </Card>
)
