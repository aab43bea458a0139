/**
 * Raw TOML -> validated `GatewayConfig`. The files are merged (`merge.ts`), then each section
 * is built by its own module, all reporting into one context (`context.ts`): every problem
 * found is reported (one line each, naming the file and the key path) instead of stopping at
 * the first, so an operator can fix a configuration in one pass. Warnings (a deprecated key,
 * a setting accepted but not enforced) let the configuration load and are logged at start-up.
 */
import { TemplateEngine } from "../inference/templates.ts"
import { type BuildContext, type ConfigInput, makeBuildContext, tableDecoder } from "./context.ts"
import { buildEmbeddingModels } from "./embeddingModels.ts"
import { buildEvaluations, type JudgeFunction } from "./evaluators.ts"
import { checkExperimentationMetrics } from "./experimentation.ts"
import { buildFunctions } from "./functions.ts"
import { buildGateway } from "./gateway.ts"
import { mergeConfigSources } from "./merge.ts"
import { buildMetrics } from "./metrics.ts"
import { buildModels, buildProviderTypeDefaults, checkCredentials, shorthandDefaults } from "./models.ts"
import { buildRateLimiting } from "./rateLimits.ts"
import { buildObjectStorage } from "./objectStorage.ts"
import { RawConfig } from "./raw.ts"
import { makeTemplateFiles } from "./templateFiles.ts"
import { buildTools } from "./tools.ts"
import type { EvaluationConfig, FunctionConfig, GatewayConfig, MetricConfig } from "./types.ts"

export type ConfigBuilt =
  | { readonly config: GatewayConfig; readonly warnings: ReadonlyArray<string> }
  | { readonly errors: ReadonlyArray<string> }

const decodeConfig = tableDecoder(RawConfig)

/** the top-level sections; an unknown top-level key is one problem among others: reported, and the rest checked */
const decodeSections = (context: BuildContext) => {
  const known: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(context.merged.value)) {
    if (Object.hasOwn(RawConfig.fields, key)) known[key] = value
    else context.report([key], "unknown field")
  }
  return context.decodeAt(decodeConfig, known, [])
}

/**
 * Every evaluator's scores are feedback of an inference-level metric of its own, so that they
 * can be read, filtered on (list_inferences, from_inferences) and given by hand like any metric.
 */
const addEvaluatorMetrics = (
  metrics: Map<string, MetricConfig>,
  functions: ReadonlyMap<string, FunctionConfig>,
  evaluations: ReadonlyMap<string, EvaluationConfig>
): void => {
  for (const owner of [...functions.values(), ...evaluations.values()]) {
    for (const evaluator of owner.evaluators.values()) {
      metrics.set(evaluator.metricName, {
        name: evaluator.metricName,
        type: evaluator.outputType,
        level: "inference",
        optimize: evaluator.optimize,
        description: `the scores of evaluator "${evaluator.name}"`
      })
    }
  }
}

/** TensorZero's fine-tuning optimizers: a migrating configuration loads, and is told they are not run */
const warnOptimizers = (context: BuildContext, tables: Readonly<Record<string, unknown>>) => {
  for (const name of Object.keys(tables)) {
    context.warn(["optimizers", name], "fine-tuning optimizers are not run by this gateway (GEPA and DICL are: docs/gepa.md, docs/dicl.md): ignored")
  }
}

export const buildConfig = (input: ConfigInput): ConfigBuilt => {
  const { merged, issues } = mergeConfigSources(input.sources)
  const context = makeBuildContext(input, merged, issues)
  const raw = decodeSections(context)
  if (raw === undefined) return { errors: context.problems() }

  const gateway = buildGateway(context, raw.gateway ?? {}, raw.postgres ?? {})
  warnOptimizers(context, raw.optimizers ?? {})
  const tools = buildTools(context, raw.tools ?? {})
  const metrics = buildMetrics(context, raw.metrics ?? {})
  const typeDefaults = buildProviderTypeDefaults(context, raw.provider_types ?? {})
  const shorthands = shorthandDefaults(context, typeDefaults, gateway.settings.dummyShorthands)
  const relay = gateway.settings.relay
  const models = buildModels(context, raw.models ?? {}, typeDefaults, relay)
  const embeddingModels = buildEmbeddingModels(context, raw.embedding_models ?? {}, typeDefaults, relay)
  const templates = makeTemplateFiles(context, gateway.templateAccess)
  const judges = new Map<string, JudgeFunction>()
  const scope = {
    tools,
    templates,
    modelNames: new Set(Object.keys(raw.models ?? {})),
    embeddingModelNames: new Set(Object.keys(raw.embedding_models ?? {})),
    shorthands,
    judges
  }
  const functions = buildFunctions(context, scope, raw.functions ?? {})
  const evaluations = buildEvaluations(context, scope, raw.evaluations ?? {}, new Set(Object.keys(raw.functions ?? {})), functions)
  // judges run as functions of their own (reserved `gateway::` names: no configured function has one)
  for (const [name, judge] of judges) functions.set(name, judge.fn)
  // GEPA's analyst and mutator, in every configuration: an optimization runs them with a variant of its own
  for (const builtin of input.builtins?.() ?? []) {
    templates.addBuiltin(builtin.systemKey, builtin.systemSource, `the built-in system template of ${builtin.fn.name}`)
    functions.set(builtin.fn.name, builtin.fn)
  }
  checkCredentials(context, functions, models, shorthands, relay, (name) => judges.get(name)?.keyPath ?? ["functions", name])
  addEvaluatorMetrics(metrics, functions, evaluations)
  checkExperimentationMetrics(context, functions, metrics)
  const rateLimiting = buildRateLimiting(context, raw.rate_limiting ?? {})
  const objectStorage = buildObjectStorage(context, raw.object_storage)

  const compiled = TemplateEngine.compile(templates.sources())
  if ("errors" in compiled) {
    for (const error of compiled.errors) context.reportAt(error.origin, error.message)
  }
  if (context.hasProblems() || "errors" in compiled) return { errors: context.problems() }
  return {
    config: { gateway: gateway.settings, models, embeddingModels, functions, tools, metrics, evaluations, rateLimiting, templates: compiled.engine, shorthands, objectStorage },
    warnings: context.warnings()
  }
}
