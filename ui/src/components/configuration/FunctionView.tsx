/**
 * A function as loaded: its type and tools, its variants (template sources, settings), the JSON
 * schemas of its templates' arguments and of its output, its evaluators. Variants and schemas are
 * folded: a function can have many, and templates run long.
 */
import type { UiFunction, UiVariant } from "../../../../src/api/uiConfig.ts"
import { JsonView } from "../JsonView.tsx"
import { Badge, Collapsible, Facts } from "../ui.tsx"
import { anchorOf, InPageLink } from "./anchors.tsx"
import { EvaluatorsTable } from "./EvaluatorsTable.tsx"

const asText = (value: unknown) => value === undefined || value === null ? "—" : typeof value === "string" ? value : JSON.stringify(value)

const VariantView = (props: { variant: UiVariant; functionName: string }) => {
  const { variant } = props
  const templates = Object.entries(variant.templates)
  return (
    <Collapsible
      summary={
        <>
          {variant.name} <span className="muted config-summary">{variant.type} · weight {variant.weight}{variant.model === "" ? "" : ` · ${variant.model}`}</span>
        </>
      }
    >
      <Facts facts={[["Type", variant.type], ["Weight", variant.weight], ["Model", variant.model === "" ? "—" : <code>{variant.model}</code>]]} />
      {templates.length === 0 ? <p className="muted">No templates: the input's messages are sent as they are.</p> : templates.map(([name, source]) => (
        <figure className="template" key={name}>
          <figcaption>Template <code>{name}</code></figcaption>
          <pre>{source}</pre>
        </figure>
      ))}
      <h5>Settings</h5>
      <JsonView value={variant.settings} label={`settings of variant ${variant.name} of ${props.functionName}`} />
    </Collapsible>
  )
}

export const FunctionView = (props: { fn: UiFunction }) => {
  const { fn } = props
  const schemas = Object.entries(fn.schemas)
  return (
    <article className="config-item" id={anchorOf("function", fn.name)} aria-labelledby={`${anchorOf("function", fn.name)}-name`}>
      <h3 id={`${anchorOf("function", fn.name)}-name`}>
        <code>{fn.name}</code> <Badge>{fn.type}</Badge> {fn.builtin && <Badge tone="warn">built-in</Badge>}
      </h3>
      {fn.description !== undefined && <p>{fn.description}</p>}
      <Facts
        facts={[
          [
            "Tools",
            fn.tools.length === 0 ? "none" : fn.tools.map((tool, i) => (
              <span key={tool}>{i > 0 && ", "}<InPageLink to={anchorOf("tool", tool)}>{tool}</InPageLink></span>
            ))
          ],
          ["Tool choice", asText(fn.tool_choice)],
          ["Parallel tool calls", asText(fn.parallel_tool_calls)],
          ["Variants", fn.variants.length]
        ]}
      />
      <h4>Variants</h4>
      {fn.variants.length === 0 ? <p className="muted">No variants.</p> : fn.variants.map((variant) => (
        <VariantView key={variant.name} variant={variant} functionName={fn.name} />
      ))}
      {(schemas.length > 0 || fn.output_schema !== undefined) && <h4>Schemas</h4>}
      {schemas.map(([name, schema]) => (
        <Collapsible key={name} summary={<>Schema of the <code>{name}</code> template's arguments</>}>
          <JsonView value={schema} label={`${name} schema of ${fn.name}`} />
        </Collapsible>
      ))}
      {fn.output_schema !== undefined && (
        <Collapsible summary="Output schema">
          <JsonView value={fn.output_schema} label={`output schema of ${fn.name}`} />
        </Collapsible>
      )}
      {fn.evaluators.length > 0 && (
        <>
          <h4>Evaluators</h4>
          <EvaluatorsTable evaluators={fn.evaluators} caption={`Evaluators of ${fn.name}`} />
        </>
      )}
      {fn.experimentation !== undefined && (
        <Collapsible summary="Experimentation">
          <JsonView value={fn.experimentation} label={`experimentation of ${fn.name}`} />
        </Collapsible>
      )}
    </article>
  )
}
