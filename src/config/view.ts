/**
 * The configuration as the UI shows it (src/api/uiConfig.ts): the loaded, checked configuration
 * turned back into plain JSON, template sources included. Secrets stay out: a credential is
 * shown by where it comes from, an extra header by its name.
 */
import type { UiConfig, UiEvaluator, UiModel, UiVariant } from "../api/uiConfig.ts"
import type { Credential } from "./credentials.ts"
import {
  type EmbeddingModelConfig,
  type EvaluatorConfig,
  type GatewayConfig,
  isSamplingVariant,
  type ModelCallConfig,
  type ModelConfig,
  type ProviderConfig,
  type VariantConfig,
  variantModel,
  variantTemplates
} from "./types.ts"

const credentialText = (credential: Credential): string => {
  switch (credential.kind) {
    case "static":
      return "configured"
    case "missing":
      return `missing: ${credential.what}`
    case "dynamic":
      return `dynamic::${credential.name}`
    case "none":
      return "none"
    case "fallback":
      return `${credentialText(credential.primary)}, else ${credentialText(credential.fallback)}`
  }
}

/** without the keys a JSON value cannot show (undefined) */
const defined = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

const callSettings = (call: ModelCallConfig) =>
  defined({
    ...call.params,
    json_mode: call.jsonMode,
    retries: { num_retries: call.retries.numRetries, max_delay_s: call.retries.maxDelayS },
    timeouts: call.timeouts,
    extra_body: call.extraBody.length === 0 ? undefined : call.extraBody,
    extra_headers: call.extraHeaders.length === 0 ? undefined : call.extraHeaders.map((edit) => edit.name)
  })

const variantSettings = (variant: VariantConfig): Record<string, unknown> => {
  if (isSamplingVariant(variant)) {
    return defined({
      candidates: variant.candidates,
      timeout_ms: variant.candidateTimeoutMs,
      [variant.type === "experimental_best_of_n_sampling" ? "evaluator" : "fuser"]: callSettings(variant.judge)
    })
  }
  if (variant.type === "experimental_dynamic_in_context_learning") {
    return defined({ ...callSettings(variant), embedding_model: variant.embeddingModel, k: variant.k, max_distance: variant.maxDistance })
  }
  return callSettings(variant)
}

const variantView = (config: GatewayConfig, variant: VariantConfig): UiVariant => ({
  name: variant.name,
  type: variant.type,
  weight: variant.weight,
  model: variantModel(variant).model,
  templates: Object.fromEntries(
    [...variantTemplates(variant)].map(([name, key]) => [name, config.templates.source(key) ?? ""])
  ),
  settings: variantSettings(variant)
})

const evaluatorSettings = (evaluator: EvaluatorConfig): Record<string, unknown> => {
  switch (evaluator.type) {
    case "exact_match":
    case "typescript":
      return {}
    case "regex":
      return defined({ must_match: evaluator.mustMatch?.source, must_not_match: evaluator.mustNotMatch?.source })
    case "tool_use":
      return { behavior: evaluator.behavior, tools: evaluator.tools }
    case "llm_judge":
      return defined({
        include_reference_output: evaluator.includeReferenceOutput,
        input_format: evaluator.inputFormat,
        description: evaluator.description,
        judge_function: evaluator.judgeFunctionName
      })
  }
}

const evaluatorView = (evaluator: EvaluatorConfig): UiEvaluator =>
  defined({
    name: evaluator.name,
    type: evaluator.type,
    metric_name: evaluator.metricName,
    output_type: evaluator.outputType,
    optimize: evaluator.optimize,
    cutoff: evaluator.cutoff,
    settings: evaluatorSettings(evaluator)
  }) as UiEvaluator

const providerView = (provider: ProviderConfig) => ({
  name: provider.name,
  type: provider.type,
  model_name: provider.modelName,
  credential: credentialText(provider.credential),
  settings: defined({
    ...provider.settings,
    timeouts: provider.timeouts,
    cost: provider.cost,
    extra_body: provider.extraBody.length === 0 ? undefined : provider.extraBody,
    extra_headers: provider.extraHeaders.length === 0 ? undefined : provider.extraHeaders.map((edit) => edit.name)
  })
})

const modelView = (model: ModelConfig | EmbeddingModelConfig): UiModel => ({
  name: model.name,
  routing: model.routing,
  providers: [...model.providers.values()].map(providerView)
})

export const configView = (config: GatewayConfig): UiConfig => ({
  functions: [...config.functions.values()].map((fn) =>
    defined({
      name: fn.name,
      type: fn.type,
      description: fn.description,
      builtin: fn.name.startsWith("gateway::"),
      schemas: Object.fromEntries([...fn.schemas].map(([name, validator]) => [name, validator.schema])),
      output_schema: fn.outputSchema?.schema,
      tools: fn.tools,
      tool_choice: fn.toolChoice,
      parallel_tool_calls: fn.parallelToolCalls,
      variants: [...fn.variants.values()].map((variant) => variantView(config, variant)),
      evaluators: [...fn.evaluators.values()].map(evaluatorView),
      experimentation: fn.experimentation === undefined ? undefined : JSON.parse(JSON.stringify(fn.experimentation))
    }) as UiConfig["functions"][number]
  ),
  models: [...config.models.values()].map(modelView),
  embedding_models: [...config.embeddingModels.values()].map(modelView),
  tools: [...config.tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict })),
  metrics: [...config.metrics.values()].map((metric) =>
    defined({ name: metric.name, type: metric.type, level: metric.level, optimize: metric.optimize, description: metric.description }) as UiConfig["metrics"][number]
  ),
  evaluations: [...config.evaluations.values()].map((evaluation) =>
    defined({
      name: evaluation.name,
      function_name: evaluation.functionName,
      description: evaluation.description,
      evaluators: [...evaluation.evaluators.values()].map(evaluatorView)
    }) as UiConfig["evaluations"][number]
  )
})
