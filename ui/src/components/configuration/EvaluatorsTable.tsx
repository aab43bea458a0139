/** The evaluators of a function or of an evaluation: what each scores, under which metric, and its own settings. */
import type { UiEvaluator } from "../../../../src/api/uiConfig.ts"
import { Table } from "../ui.tsx"

const settingsText = (settings: Record<string, unknown>) => Object.keys(settings).length === 0 ? "—" : <code>{JSON.stringify(settings)}</code>

export const EvaluatorsTable = (props: { evaluators: ReadonlyArray<UiEvaluator>; caption: string }) => (
  <Table<UiEvaluator>
    caption={props.caption}
    rows={props.evaluators}
    rowKey={(evaluator) => evaluator.name}
    empty="No evaluators."
    columns={[
      { header: "Name", cell: (evaluator) => evaluator.name },
      { header: "Type", cell: (evaluator) => evaluator.type },
      { header: "Metric", cell: (evaluator) => <code>{evaluator.metric_name}</code> },
      { header: "Output", cell: (evaluator) => evaluator.output_type },
      { header: "Optimize", cell: (evaluator) => evaluator.optimize },
      { header: "Cutoff", cell: (evaluator) => evaluator.cutoff ?? "—", numeric: true },
      { header: "Settings", cell: (evaluator) => settingsText(evaluator.settings) }
    ]}
  />
)
