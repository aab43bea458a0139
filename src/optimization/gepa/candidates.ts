/**
 * GEPA's candidates: a set of prompt templates for one function, run as a variant built from
 * the optimized variant (its model and settings, the candidate's templates). A candidate's
 * templates are compiled into an engine of their own that also holds the configuration's, so
 * that their includes resolve; before a candidate is run it is checked against the function's
 * schemas and sample inputs. No I/O.
 */
import * as Result from "effect/Result"
import type { Input } from "../../api/inference.ts"
import type { ChatCompletionVariant, FunctionConfig, ModelCallConfig } from "../../config/types.ts"
import { renderInput } from "../../inference/input.ts"
import { withoutStoredFiles } from "../../objectStorage/inputFiles.ts"
import { type TemplateEngine, templateKey, type TemplateSource } from "../../inference/templates.ts"

export interface GepaCandidate {
  /** its variant's name, unique within the optimization */
  readonly name: string
  /** template name -> MiniJinja source */
  readonly templates: Readonly<Record<string, string>>
  /** the candidate it was mutated from; none for the initial ones */
  readonly parent?: string | undefined
  readonly iteration: number
}

/**
 * The sources of a configured variant's templates, by template name. `system_instructions`
 * come back wrapped as literal templates (`literalTemplate`): they render the same text.
 */
export const templatesOf = (engine: TemplateEngine, variant: ModelCallConfig): Record<string, string> => {
  const templates: Record<string, string> = {}
  for (const [name, key] of variant.templates) {
    const source = engine.source(key)
    if (source !== undefined) templates[name] = source
  }
  return templates
}

/** The variant that runs `candidate`: `base`'s model and settings, the candidate's templates (keys in `compileCandidate`'s engine). */
export const candidateVariant = (base: ChatCompletionVariant, functionName: string, candidate: GepaCandidate): ChatCompletionVariant => ({
  name: candidate.name,
  type: "chat_completion",
  weight: 0,
  model: base.model,
  templates: new Map(Object.keys(candidate.templates).map((name) => [name, templateKey(functionName, candidate.name, name)])),
  jsonMode: base.jsonMode,
  params: base.params,
  retries: base.retries,
  timeouts: base.timeouts,
  extraBody: base.extraBody,
  extraHeaders: base.extraHeaders
})

/**
 * An engine with every template of `base` plus the candidate's (under `candidateVariant`'s keys,
 * replacing any of the same key), or the candidate's syntax errors, each naming its template.
 */
export const compileCandidate = (
  base: TemplateEngine,
  functionName: string,
  candidate: GepaCandidate
): { readonly engine: TemplateEngine } | { readonly problem: string } => {
  const sources: Array<TemplateSource> = Object.entries(candidate.templates).map(([name, source]) => ({
    key: templateKey(functionName, candidate.name, name),
    source,
    origin: `template "${name}" of candidate "${candidate.name}"`
  }))
  const compiled = base.extended(sources)
  if ("errors" in compiled) return { problem: compiled.errors.map((error) => `${error.origin}: ${error.message}`).join("; ") }
  return compiled
}

/**
 * Why the candidate cannot run, or undefined: a schema of the function without its template,
 * or a sample input that does not render with its templates (an undefined variable, a failed
 * filter), named by the input's number and path. `variant` and `engine` are the candidate's
 * (`candidateVariant`, `compileCandidate`).
 */
export const candidateProblem = (
  fn: FunctionConfig,
  candidate: GepaCandidate,
  variant: ModelCallConfig,
  engine: TemplateEngine,
  inputs: ReadonlyArray<Input>
): string | undefined => {
  for (const schemaName of fn.schemas.keys()) {
    if (!Object.hasOwn(candidate.templates, schemaName)) {
      return `candidate "${candidate.name}" has no template "${schemaName}", which the function's schema "${schemaName}" needs`
    }
  }
  for (const [i, input] of inputs.entries()) {
    const rendered = renderInput(withoutStoredFiles(input), fn, variant, engine)
    if (Result.isFailure(rendered)) return `candidate "${candidate.name}", sample input ${i + 1}: ${rendered.failure.path}: ${rendered.failure.message}`
  }
  return undefined
}
