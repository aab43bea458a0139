/**
 * A completed GEPA task: the statistics of every variant it scored on the validation set (the
 * initial ones and the new), the new variants with their templates, and the configuration files
 * that adopt them (`GET /v1/ui/optimization/gepa/{task_id}/export`), each offered as a download.
 */
import { useQuery } from "@tanstack/react-query"
import type { GepaTaskResponse } from "../../../../src/api/gepa.ts"
import type { UiExportedFile, UiGepaExport } from "../../../../src/api/uiOptimization.ts"
import { api } from "../../api.ts"
import { JsonView } from "../JsonView.tsx"
import { Badge, Button, Card, Collapsible, type Column, ErrorNotice, Facts, formatNumber, Loading, Table } from "../ui.tsx"

type Completed = Extract<GepaTaskResponse, { status: "completed" }>
type Statistics = Completed["statistics"][string][string]

const statistic = (value: Statistics | undefined) =>
  value === undefined || value.mean === null ? "—" : `${formatNumber(value.mean)} ± ${formatNumber(value.stdev ?? 0)} (n=${value.count})`

export const GepaStatisticsTable = (props: { result: Completed }) => {
  const evaluators = [...new Set(Object.values(props.result.statistics).flatMap((byEvaluator) => Object.keys(byEvaluator)))]
  const rows = Object.entries(props.result.statistics).map(([variant, byEvaluator]) => ({ variant, byEvaluator }))
  const columns: Array<Column<(typeof rows)[number]>> = [
    {
      header: "Variant",
      cell: (row) => <>{row.variant} {row.variant in props.result.variants ? <Badge tone="good">new</Badge> : <Badge>initial</Badge>}</>
    },
    ...evaluators.map((evaluator): Column<(typeof rows)[number]> => ({
      header: `${evaluator} (mean ± stdev)`,
      numeric: true,
      cell: (row) => statistic(row.byEvaluator[evaluator])
    }))
  ]
  return <Table caption="Scores on the validation set" showCaption columns={columns} rows={rows} rowKey={(row) => row.variant} />
}

/** a variant table's templates (`templates.<name>.content`) and its other fields */
const splitVariant = (table: Record<string, unknown>) => {
  const { templates, ...settings } = table
  const sources = Object.entries((templates ?? {}) as Record<string, { content?: unknown }>)
    .map(([name, entry]) => ({ name, content: typeof entry?.content === "string" ? entry.content : JSON.stringify(entry) }))
  return { sources, settings }
}

export const GepaVariants = (props: { result: Completed }) => {
  const entries = Object.entries(props.result.variants)
  return (
    <Card title="New variants">
      {entries.length === 0 && <p className="muted">No new variant beat the initial ones: there is nothing to adopt.</p>}
      {entries.map(([name, table]) => {
        const { sources, settings } = splitVariant(table)
        return (
          <section key={name} className="variant" aria-labelledby={`variant-${name}`}>
            <h3 id={`variant-${name}`}>{name}</h3>
            <Facts facts={[["Type", String(settings.type ?? "—")], ["Model", String(settings.model ?? "—")]]} />
            {sources.map((source) => (
              <div key={source.name}>
                <h4>Template {source.name}</h4>
                <pre className="output" tabIndex={0} aria-label={`template ${source.name} of ${name}`}>{source.content}</pre>
              </div>
            ))}
            <Collapsible summary="Settings">
              <JsonView value={settings} label={`settings of ${name}`} />
            </Collapsible>
          </section>
        )
      })}
    </Card>
  )
}

/** saves `file` through the browser (its last path segment as the name: a download cannot carry folders) */
const download = (file: UiExportedFile) => {
  const url = URL.createObjectURL(new Blob([file.content], { type: "text/plain;charset=utf-8" }))
  const link = document.createElement("a")
  link.href = url
  link.download = file.path.split("/").at(-1) ?? file.path
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

export const GepaExportFiles = (props: { taskId: string }) => {
  const exported = useQuery({
    queryKey: ["gepa-export", props.taskId],
    queryFn: () => api<UiGepaExport>(`/v1/ui/optimization/gepa/${encodeURIComponent(props.taskId)}/export`),
    staleTime: Infinity
  })
  return (
    <Card title="Configuration files">
      <p className="muted">
        The files that add the new variants to the configuration, as <code>gateway optimize export</code> writes them: save each at the path shown,
        relative to one folder, and load <code>gateway.toml</code> with the rest of the configuration (a <code>--config-file</code> glob such as
        <code> 'config/**/*.toml'</code> merges it).
      </p>
      {exported.isPending && <Loading what="the files" />}
      <ErrorNotice error={exported.error} />
      {exported.data !== undefined && (
        <ul className="files">
          {exported.data.files.map((file) => (
            <li key={file.path}>
              <div className="row">
                <code>{file.path}</code>
                <Button onClick={() => download(file)} label={`Download ${file.path}`}>Download</Button>
              </div>
              <Collapsible summary={`Contents of ${file.path}`}>
                <pre className="output" tabIndex={0} aria-label={`contents of ${file.path}`}>{file.content}</pre>
              </Collapsible>
            </li>
          ))}
        </ul>
      )}
    </Card>
  )
}
