/**
 * Datasets: every dataset with its live datapoints (in all, and per function) and its last
 * change, each linked to its page; forms to build a dataset from stored inferences and to
 * import one from JSON Lines.
 */
import { Link, useLocation } from "react-router"
import type { DatasetsList } from "../../../src/api/uiDatasets.ts"
import { FromInferencesForm } from "../components/datasets/FromInferencesForm.tsx"
import { ImportForm } from "../components/datasets/ImportForm.tsx"
import { datasetPage } from "../components/datasets/paths.ts"
import { useDatasets } from "../components/datasets/queries.ts"
import { ErrorNotice, formatNumber, formatTime, Loading, Page, Success, Table } from "../components/ui.tsx"

type Dataset = DatasetsList["datasets"][number]

export default function Datasets() {
  const datasets = useDatasets()
  // a notice handed over by the page that navigated here (a deleted dataset)
  const notice = (useLocation().state as { notice?: string } | null)?.notice
  return (
    <Page title="Datasets">
      {notice !== undefined && <Success>{notice}</Success>}
      <ErrorNotice error={datasets.error} />
      {datasets.isPending
        ? <Loading what="datasets" />
        : (
          <Table<Dataset>
            caption="Datasets"
            rows={datasets.data?.datasets ?? []}
            rowKey={(dataset) => dataset.name}
            empty="No datasets yet: create one from inferences or import one below."
            columns={[
              { header: "Name", cell: (dataset) => <Link to={datasetPage(dataset.name)}>{dataset.name}</Link> },
              { header: "Datapoints", numeric: true, cell: (dataset) => formatNumber(dataset.datapoint_count) },
              {
                header: "Functions",
                cell: (dataset) =>
                  dataset.functions.length === 0
                    ? <span className="muted">none live</span>
                    : dataset.functions.map((fn) => `${fn.function_name} (${formatNumber(fn.datapoint_count)})`).join(", ")
              },
              { header: "Last updated", cell: (dataset) => formatTime(dataset.last_updated) }
            ]}
          />
        )}
      <div className="grid">
        <FromInferencesForm />
        <ImportForm />
      </div>
    </Page>
  )
}
