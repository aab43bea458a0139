/**
 * The Configuration page: the configuration as the gateway loaded it (`GET /v1/ui/config`),
 * read-only: functions with their variants, templates and schemas, models and providers,
 * embedding models, tools, metrics, evaluations; a table of contents links to each.
 */
import type { UiConfig, UiMetric, UiTool } from "../../../src/api/uiConfig.ts"
import { anchorOf, InPageLink, Section, useScrollToFragment } from "../components/configuration/anchors.tsx"
import "../components/configuration/configuration.css"
import { EvaluatorsTable } from "../components/configuration/EvaluatorsTable.tsx"
import { FunctionView } from "../components/configuration/FunctionView.tsx"
import { ModelView } from "../components/configuration/ModelView.tsx"
import { JsonView } from "../components/JsonView.tsx"
import { Badge, Collapsible, ErrorNotice, Loading, Page, Table } from "../components/ui.tsx"
import { useUiConfig } from "../config.ts"

const Contents = (props: { config: UiConfig }) => {
  const { config } = props
  const own = config.functions.filter((fn) => !fn.builtin)
  const entries: ReadonlyArray<{ id: string; label: string; items: ReadonlyArray<{ id: string; label: string }> }> = [
    { id: "functions", label: "Functions", items: own.map((fn) => ({ id: anchorOf("function", fn.name), label: fn.name })) },
    { id: "models", label: "Models", items: config.models.map((model) => ({ id: anchorOf("model", model.name), label: model.name })) },
    { id: "embedding-models", label: "Embedding models", items: config.embedding_models.map((model) => ({ id: anchorOf("embedding-model", model.name), label: model.name })) },
    { id: "tools", label: "Tools", items: config.tools.map((tool) => ({ id: anchorOf("tool", tool.name), label: tool.name })) },
    { id: "metrics", label: "Metrics", items: [] },
    { id: "evaluations", label: "Evaluations", items: config.evaluations.map((evaluation) => ({ id: anchorOf("evaluation", evaluation.name), label: evaluation.name })) }
  ]
  return (
    <nav className="card config-toc" aria-label="On this page">
      <ul>
        {entries.map((entry) => (
          <li key={entry.id}>
            <InPageLink to={entry.id}>{entry.label}</InPageLink>
            {entry.items.length > 0 && (
              <ul>
                {entry.items.map((item) => <li key={item.id}><InPageLink to={item.id}>{item.label}</InPageLink></li>)}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </nav>
  )
}

const ToolView = (props: { tool: UiTool }) => {
  const id = anchorOf("tool", props.tool.name)
  return (
    <article className="config-item" id={id} aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}><code>{props.tool.name}</code> {props.tool.strict && <Badge>strict</Badge>}</h3>
      <p>{props.tool.description}</p>
      <Collapsible summary="Parameters">
        <JsonView value={props.tool.parameters} label={`parameters of ${props.tool.name}`} />
      </Collapsible>
    </article>
  )
}

const MetricsTable = (props: { metrics: ReadonlyArray<UiMetric> }) => (
  <Table<UiMetric>
    caption="Metrics"
    rows={props.metrics}
    rowKey={(metric) => metric.name}
    empty="No metrics."
    columns={[
      { header: "Name", cell: (metric) => <code>{metric.name}</code> },
      { header: "Type", cell: (metric) => metric.type },
      { header: "Level", cell: (metric) => metric.level },
      { header: "Optimize", cell: (metric) => metric.optimize },
      { header: "Description", cell: (metric) => metric.description ?? "—" }
    ]}
  />
)

const none = (what: string) => <p className="muted">No {what} configured.</p>

export default function Configuration() {
  const config = useUiConfig()
  useScrollToFragment(config.isSuccess)
  if (config.isPending) return <Page title="Configuration"><Loading what="the configuration" /></Page>
  if (config.isError) return <Page title="Configuration"><ErrorNotice error={config.error} /></Page>
  const { functions, models, embedding_models, tools, metrics, evaluations } = config.data
  const own = functions.filter((fn) => !fn.builtin)
  const builtin = functions.filter((fn) => fn.builtin)
  return (
    <Page title="Configuration">
      <p className="muted">As the gateway loaded it at start-up (read-only: a change takes a restart). Credentials show where they come from, never their value.</p>
      <div className="config-layout">
        <Contents config={config.data} />
        <div>
          <Section id="functions" title="Functions">
            {own.length === 0 ? none("functions") : own.map((fn) => <FunctionView key={fn.name} fn={fn} />)}
            {builtin.length > 0 && (
              <Collapsible summary={`The gateway's own functions (${builtin.length}): LLM judges, prompt optimization`}>
                {builtin.map((fn) => <FunctionView key={fn.name} fn={fn} />)}
              </Collapsible>
            )}
          </Section>
          <Section id="models" title="Models and providers">
            {models.length === 0 ? none("models") : models.map((model) => <ModelView key={model.name} model={model} section="model" />)}
          </Section>
          <Section id="embedding-models" title="Embedding models">
            {embedding_models.length === 0 ? none("embedding models") : embedding_models.map((model) => (
              <ModelView key={model.name} model={model} section="embedding-model" />
            ))}
          </Section>
          <Section id="tools" title="Tools">
            {tools.length === 0 ? none("tools") : tools.map((tool) => <ToolView key={tool.name} tool={tool} />)}
          </Section>
          <Section id="metrics" title="Metrics">
            <MetricsTable metrics={metrics} />
          </Section>
          <Section id="evaluations" title="Evaluations">
            {evaluations.length === 0 ? none("evaluations") : evaluations.map((evaluation) => {
              const id = anchorOf("evaluation", evaluation.name)
              return (
                <article className="config-item" key={evaluation.name} id={id} aria-labelledby={`${id}-name`}>
                  <h3 id={`${id}-name`}><code>{evaluation.name}</code></h3>
                  <p>
                    Evaluates <InPageLink to={anchorOf("function", evaluation.function_name)}>{evaluation.function_name}</InPageLink>
                    {evaluation.description !== undefined && `: ${evaluation.description}`}
                  </p>
                  <EvaluatorsTable evaluators={evaluation.evaluators} caption={`Evaluators of ${evaluation.name}`} />
                </article>
              )
            })}
          </Section>
        </div>
      </div>
    </Page>
  )
}
