/**
 * Raw TOML -> validated `GatewayConfig`. Every problem found is reported (one line each,
 * naming the file and the key path) instead of stopping at the first, so an operator can
 * fix a configuration in one pass.
 */
import * as path from "node:path"
import * as Schema from "effect/Schema"
import { type Decoded, makeDecoder, makeLenientDecoder, unknownField } from "../decode.ts"
import { type ExtraHeaderEdit, extraHeaderProblem, parsePointer } from "../inference/extraBody.ts"
import { type TemplateSource, TemplateEngine, templateKey, templateReferences } from "../inference/templates.ts"
import { type InferenceParams, inferenceParamNames, type ToolChoice, type ToolDefinition } from "../inference/types.ts"
import { compileJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import { parseShorthandModel, providerTypes } from "../providers/registry.ts"
import { rateLimitRule } from "../ratelimit/config.ts"
import type { RateLimitRule } from "../ratelimit/rules.ts"
import { headerProblem } from "../tracing/trace.ts"
import { parseCredentialLocation, resolveCredential } from "./credentials.ts"
import { type ConfigIssue, type ConfigSource, formatIssue, type KeyPath, mergeConfigSources } from "./merge.ts"
import {
  providerCommonFields,
  RawConfig,
  RawFunction,
  RawGateway,
  RawMetric,
  RawModel,
  RawRateLimiting,
  RawRateLimitRule,
  RawTool,
  RawVariant
} from "./raw.ts"
import type {
  FunctionConfig,
  GatewayConfig,
  GatewaySettings,
  MetricConfig,
  ModelConfig,
  ProviderConfig,
  VariantConfig
} from "./types.ts"

export interface ConfigInput {
  /** the TOML files, in the order their glob matched them; empty for `--default-config` */
  readonly sources: ReadonlyArray<ConfigSource>
  /** reads a template or schema file; undefined when it does not exist */
  readonly readFile: (absolutePath: string) => string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
}

export const defaultBindAddress = "0.0.0.0:3000"
export const defaultMaxRequestBodyBytes = 10 * 1024 * 1024
const reservedMetricNames = new Set(["comment", "demonstration"])
const legacyRoles = ["system", "user", "assistant"] as const

/**
 * A table's decoders: the strict one reports unknown keys; when those are its only problems,
 * the lenient one lets validation go on below the table, so a typo does not hide the rest.
 */
const tableDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => ({
  strict: makeDecoder(schema),
  lenient: makeLenientDecoder(schema)
})

type TableDecoder<A> = {
  readonly strict: (input: unknown) => Decoded<A>
  readonly lenient: (input: unknown) => Decoded<A>
}

const decodeConfig = tableDecoder(RawConfig)
const decodeGateway = tableDecoder(RawGateway)
const decodeModel = tableDecoder(RawModel)
const decodeFunction = tableDecoder(RawFunction)
const decodeVariant = tableDecoder(RawVariant)
const decodeTool = tableDecoder(RawTool)
const decodeMetric = tableDecoder(RawMetric)
const decodeRateLimiting = tableDecoder(RawRateLimiting)
const decodeRateLimitRule = tableDecoder(RawRateLimitRule)
const providerDecoders = new Map(
  [...providerTypes.values()].map((provider) => [
    provider.type,
    tableDecoder(Schema.Struct({ ...providerCommonFields, ...provider.settingsFields }))
  ])
)

export const parseBindAddress = (text: string): { readonly host: string; readonly port: number } | undefined => {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(text)
  if (match === null) return undefined
  const port = Number(match[2])
  if (port > 65535) return undefined
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port }
}

export const buildConfig = (
  input: ConfigInput
): { readonly config: GatewayConfig } | { readonly errors: ReadonlyArray<string> } => {
  const { merged, issues: mergeIssues } = mergeConfigSources(input.sources)
  const issues: Array<ConfigIssue> = [...mergeIssues]
  const report = (keyPath: KeyPath, message: string) => issues.push({ file: merged.fileOf(keyPath), path: keyPath, message })

  /** decodes `value` found at `keyPath`, reporting each problem under that path */
  const decodeAt = <A>(decoder: TableDecoder<A>, value: unknown, keyPath: KeyPath): A | undefined => {
    const result = decoder.strict(value)
    if (result.ok) return result.value
    for (const issue of result.issues) report([...keyPath, ...issue.path], issue.message)
    if (!result.issues.every((issue) => issue.message === unknownField)) return undefined
    const lenient = decoder.lenient(value)
    return lenient.ok ? lenient.value : undefined
  }

  /** a path written in the file at `keyPath`, relative to that file's folder */
  const resolvePath = (keyPath: KeyPath, relative: string): string => {
    const file = merged.fileOf(keyPath)
    return path.resolve(file === undefined ? process.cwd() : path.dirname(file), relative)
  }

  const readJsonSchema = (keyPath: KeyPath, relative: string): JsonSchemaValidator | undefined => {
    const absolute = resolvePath(keyPath, relative)
    const text = input.readFile(absolute)
    if (text === undefined) {
      report(keyPath, `schema file not found: ${absolute}`)
      return undefined
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      report(keyPath, `schema file ${absolute} is not valid JSON: ${(error as Error).message}`)
      return undefined
    }
    const compiled = compileJsonSchema(json)
    if ("error" in compiled) {
      report(keyPath, `invalid JSON Schema in ${absolute}: ${compiled.error}`)
      return undefined
    }
    return compiled.validator
  }

  // an unknown top-level key is one problem among others: report it and check the rest
  const known: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(merged.value)) {
    if (Object.hasOwn(RawConfig.fields, key)) known[key] = value
    else report([key], "unknown field")
  }
  /** pointers of configured extra_body edits are checked now rather than failing every call later */
  const checkPointers = (keyPath: KeyPath, edits: ReadonlyArray<{ readonly pointer: string }> | undefined) =>
    edits?.forEach((edit, index) => {
      const tokens = parsePointer(edit.pointer)
      if (tokens === undefined || tokens.length === 0) {
        report([...keyPath, index, "pointer"], `"${edit.pointer}" is not a JSON Pointer to a field (it must start with "/")`)
      }
    })
  /** configured extra_headers must be sendable, as a request's must (same check) */
  const checkHeaders = (keyPath: KeyPath, edits: ReadonlyArray<ExtraHeaderEdit> | undefined) =>
    edits?.forEach((edit, index) => {
      const problem = extraHeaderProblem(edit.name, "value" in edit ? edit.value : undefined)
      if (problem !== undefined) report([...keyPath, index, problem.field], problem.message)
    })

  const raw = decodeAt(decodeConfig, known, [])
  if (raw === undefined) return { errors: issues.map(formatIssue) }

  // [gateway]
  const rawGateway = decodeAt(decodeGateway, raw.gateway ?? {}, ["gateway"]) ?? {}
  const bindText = input.env.GATEWAY_BIND_ADDRESS ?? rawGateway.bind_address ?? defaultBindAddress
  let bindAddress = parseBindAddress(bindText)
  if (bindAddress === undefined) {
    report(
      input.env.GATEWAY_BIND_ADDRESS !== undefined ? [] : ["gateway", "bind_address"],
      `${input.env.GATEWAY_BIND_ADDRESS !== undefined ? "GATEWAY_BIND_ADDRESS: " : ""}expected HOST:PORT, got "${bindText}"`
    )
    bindAddress = { host: "0.0.0.0", port: 3000 }
  }
  const basePath = rawGateway.base_path === undefined ? "" : rawGateway.base_path.replace(/\/+$/, "")
  if (basePath !== "" && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+$/.test(basePath)) {
    report(["gateway", "base_path"], `expected a path such as "/gateway" (segments of URL path characters), got "${rawGateway.base_path}"`)
  }
  const access = rawGateway.template_filesystem_access
  const templateAccess = access === undefined ? { enabled: false } : typeof access === "boolean" ? { enabled: access } : access
  const templateBasePath = "base_path" in templateAccess && templateAccess.base_path !== undefined
    ? resolvePath(["gateway", "template_filesystem_access", "base_path"], templateAccess.base_path)
    : undefined
  const traceHeaders = rawGateway.export?.otlp?.traces?.extra_headers ?? {}
  for (const [name, value] of Object.entries(traceHeaders)) {
    const problem = headerProblem(name, value)
    if (problem !== undefined) report(["gateway", "export", "otlp", "traces", "extra_headers", name], problem)
  }
  const gateway: GatewaySettings = {
    bindAddress,
    basePath,
    debug: rawGateway.debug ?? false,
    maxRequestBodyBytes: rawGateway.max_request_body_bytes ?? defaultMaxRequestBodyBytes,
    maxRequestBytesInFlight: rawGateway.max_request_bytes_in_flight ?? 256 * 1024 * 1024,
    maxConnections: rawGateway.max_connections ?? 4096,
    requestReadTimeoutMs: rawGateway.request_read_timeout_ms ?? 60_000,
    globalOutboundHttpTimeoutMs: rawGateway.global_outbound_http_timeout_ms ?? 900_000,
    maxProviderResponseBytes: rawGateway.max_provider_response_bytes ?? 32 * 1024 * 1024,
    maxProviderStreamEventBytes: rawGateway.max_provider_stream_event_bytes ?? 4 * 1024 * 1024,
    cache: {
      shareAcrossApiKeys: rawGateway.cache?.share_across_api_keys ?? false,
      lookupTimeoutMs: rawGateway.cache?.lookup_timeout_ms ?? 1000
    },
    templateFilesystemAccess: templateAccess.enabled,
    observability: {
      enabled: rawGateway.observability?.enabled ?? true,
      disableAutomaticMigrations: rawGateway.observability?.disable_automatic_migrations ?? false,
      maxRows: rawGateway.observability?.batch_writes?.max_rows ?? 10_000,
      maxBatchBytes: rawGateway.observability?.batch_writes?.max_bytes ?? 16 * 1024 * 1024,
      flushIntervalMs: rawGateway.observability?.batch_writes?.flush_interval_ms ?? 1000,
      maxQueued: rawGateway.observability?.max_queued_writes ?? 100_000,
      maxQueuedBytes: rawGateway.observability?.max_queued_bytes ?? 256 * 1024 * 1024
    },
    traceExport: {
      enabled: rawGateway.export?.otlp?.traces?.enabled ?? false,
      extraHeaders: traceHeaders,
      sampleRatio: rawGateway.export?.otlp?.traces?.sample_ratio ?? 1
    },
    auth: {
      enabled: rawGateway.auth?.enabled ?? false,
      cacheTtlMs: rawGateway.auth?.cache_ttl_ms ?? 1000,
      maxFailedAttemptsPerMinute: rawGateway.auth?.max_failed_attempts_per_minute ?? 100
    }
  }

  // [tools.<name>]
  const tools = new Map<string, ToolDefinition>()
  for (const [name, table] of Object.entries(raw.tools ?? {})) {
    const keyPath = ["tools", name]
    const tool = decodeAt(decodeTool, table, keyPath)
    if (tool === undefined) continue
    const validator = readJsonSchema([...keyPath, "parameters"], tool.parameters)
    if (validator === undefined) continue
    tools.set(name, {
      name: tool.name ?? name,
      description: tool.description,
      parameters: validator.schema,
      strict: tool.strict ?? false,
      validator
    })
  }

  // [metrics.<name>]
  const metrics = new Map<string, MetricConfig>()
  for (const [name, table] of Object.entries(raw.metrics ?? {})) {
    const keyPath = ["metrics", name]
    if (reservedMetricNames.has(name)) {
      report(keyPath, `"${name}" is a reserved metric name and needs no configuration`)
      continue
    }
    const metric = decodeAt(decodeMetric, table, keyPath)
    if (metric !== undefined) metrics.set(name, { name, type: metric.type, level: metric.level, optimize: metric.optimize ?? "max" })
  }

  // [models.<name>]
  const models = new Map<string, ModelConfig>()
  for (const [name, table] of Object.entries(raw.models ?? {})) {
    const keyPath = ["models", name]
    if (name.startsWith("gateway::") || parseShorthandModel(name) !== undefined) {
      report(keyPath, `model names may not start with "gateway::" or "<provider_type>::", which are reserved for short-hand names`)
      continue
    }
    const model = decodeAt(decodeModel, table, keyPath)
    if (model === undefined) continue
    const providers = new Map<string, ProviderConfig>()
    for (const [providerName, providerTable] of Object.entries(model.providers)) {
      const provider = buildProvider([...keyPath, "providers", providerName], providerName, providerTable)
      if (provider !== undefined) providers.set(providerName, provider)
    }
    if (model.routing.length === 0) report([...keyPath, "routing"], "routing must name at least one provider")
    model.routing.forEach((providerName, index) => {
      if (model.providers[providerName] === undefined) {
        report([...keyPath, "routing", index], `provider "${providerName}" is not defined under models.${name}.providers`)
      }
    })
    for (const providerName of Object.keys(model.providers)) {
      if (!model.routing.includes(providerName)) {
        report([...keyPath, "providers", providerName], `provider "${providerName}" is not listed in routing`)
      }
    }
    models.set(name, { name, routing: model.routing, providers, timeouts: model.timeouts ?? {} })
  }

  function buildProvider(keyPath: KeyPath, name: string, table: Record<string, unknown>): ProviderConfig | undefined {
    const type = table.type
    const definition = typeof type === "string" ? providerTypes.get(type) : undefined
    if (definition === undefined) {
      report([...keyPath, "type"], typeof type === "string"
        ? `unknown provider type "${type}" (known: ${[...providerTypes.keys()].join(", ")})`
        : "missing field")
      return undefined
    }
    const decoded = decodeAt(providerDecoders.get(definition.type)!, table, keyPath)
    if (decoded === undefined) return undefined
    const { type: _type, model_name, api_key_location, extra_body, extra_headers, timeouts, ...settings } = decoded
    checkPointers([...keyPath, "extra_body"], extra_body)
    checkHeaders([...keyPath, "extra_headers"], extra_headers)
    let location = definition.defaultCredential
    if (api_key_location !== undefined) {
      const parsed = parseCredentialLocation(api_key_location)
      if (parsed === undefined) {
        report([...keyPath, "api_key_location"], `expected "env::NAME", "dynamic::NAME" or "none", got "${api_key_location}"`)
        return undefined
      }
      location = parsed
    }
    return {
      name,
      type: definition.type,
      modelName: model_name,
      credential: resolveCredential(location, input.env),
      extraBody: extra_body ?? [],
      extraHeaders: extra_headers ?? [],
      timeouts: timeouts ?? {},
      settings
    }
  }

  // [functions.<name>]
  const functions = new Map<string, FunctionConfig>()
  const templates: Array<TemplateSource> = []
  for (const [name, table] of Object.entries(raw.functions ?? {})) {
    const keyPath = ["functions", name]
    if (name.startsWith("gateway::")) {
      report(keyPath, `function names starting with "gateway::" are reserved`)
      continue
    }
    const fn = decodeAt(decodeFunction, table, keyPath)
    if (fn === undefined) continue
    const built = buildFunction(keyPath, name, fn)
    if (built !== undefined) functions.set(name, built)
  }

  function buildFunction(keyPath: KeyPath, name: string, fn: RawFunction): FunctionConfig | undefined {
    const schemas = new Map<string, JsonSchemaValidator>()
    for (const role of legacyRoles) {
      const legacy = fn[`${role}_schema`]
      if (legacy === undefined) continue
      if (fn.schemas?.[role] !== undefined) {
        report([...keyPath, `${role}_schema`], `both ${role}_schema and schemas.${role} are set; keep schemas.${role}.path`)
        continue
      }
      const validator = readJsonSchema([...keyPath, `${role}_schema`], legacy)
      if (validator !== undefined) schemas.set(role, validator)
    }
    for (const [schemaName, entry] of Object.entries(fn.schemas ?? {})) {
      const validator = readJsonSchema([...keyPath, "schemas", schemaName, "path"], entry.path)
      if (validator !== undefined) schemas.set(schemaName, validator)
    }

    let outputSchema: JsonSchemaValidator | undefined
    if (fn.output_schema !== undefined) {
      if (fn.type !== "json") report([...keyPath, "output_schema"], "only json functions have an output schema")
      else outputSchema = readJsonSchema([...keyPath, "output_schema"], fn.output_schema)
    }
    if (fn.type === "json") {
      for (const field of ["tools", "tool_choice", "parallel_tool_calls"] as const) {
        if (fn[field] !== undefined) report([...keyPath, field], "json functions do not take tools; use a chat function")
      }
    }
    const toolNames = fn.tools ?? []
    toolNames.forEach((toolName, index) => {
      if (!tools.has(toolName)) report([...keyPath, "tools", index], `tool "${toolName}" is not defined under [tools]`)
    })
    let toolChoice: ToolChoice = { type: "auto" }
    if (fn.tool_choice !== undefined) {
      if (typeof fn.tool_choice === "string") toolChoice = { type: fn.tool_choice }
      else {
        // the model sees the tool under its name, which `name` may set apart from its [tools] key
        toolChoice = { type: "specific", name: tools.get(fn.tool_choice.specific)?.name ?? fn.tool_choice.specific }
        if (!toolNames.includes(fn.tool_choice.specific)) {
          report([...keyPath, "tool_choice", "specific"], `tool "${fn.tool_choice.specific}" is not among the function's tools`)
        }
      }
    }

    const rawVariants = Object.entries(fn.variants ?? {})
    const decodedVariants: Array<[string, ReturnType<typeof decodeVariantAt>]> = rawVariants.map((
      [variantName, variantTable]
    ) => [variantName, decodeVariantAt([...keyPath, "variants", variantName], variantTable)])
    const anyWeight = decodedVariants.some(([, variant]) => variant?.weight !== undefined)
    const variants = new Map<string, VariantConfig>()
    for (const [variantName, variant] of decodedVariants) {
      if (variant === undefined) continue
      const built = buildVariant([...keyPath, "variants", variantName], name, fn, variantName, variant, schemas, anyWeight)
      if (built !== undefined) variants.set(variantName, built)
    }
    return {
      name,
      type: fn.type,
      description: fn.description,
      schemas,
      outputSchema,
      tools: toolNames,
      toolChoice,
      parallelToolCalls: fn.parallel_tool_calls,
      variants
    }
  }

  function decodeVariantAt(keyPath: KeyPath, table: Record<string, unknown>) {
    if (table.type !== "chat_completion") {
      report([...keyPath, "type"], typeof table.type === "string"
        ? `variant type "${table.type}" is not supported (supported: chat_completion)`
        : "missing field")
      return undefined
    }
    return decodeAt(decodeVariant, table, keyPath)
  }

  function buildVariant(
    keyPath: KeyPath,
    functionName: string,
    fn: RawFunction,
    name: string,
    variant: NonNullable<ReturnType<typeof decodeVariantAt>>,
    schemas: ReadonlyMap<string, JsonSchemaValidator>,
    anyWeight: boolean
  ): VariantConfig | undefined {
    if (variant.model === undefined) {
      report([...keyPath, "model"], "missing field")
      return undefined
    }
    if (!models.has(variant.model) && parseShorthandModel(variant.model) === undefined && raw!.models?.[variant.model] === undefined) {
      report([...keyPath, "model"], `unknown model "${variant.model}": define [models.${variant.model}] or use "<provider_type>::<model>" (provider types: ${[...providerTypes.keys()].join(", ")})`)
    }
    const templateFiles = new Map<string, { keyPath: KeyPath; relative: string }>()
    for (const role of legacyRoles) {
      const legacy = variant[`${role}_template`]
      if (legacy === undefined) continue
      if (variant.templates?.[role] !== undefined) {
        report([...keyPath, `${role}_template`], `both ${role}_template and templates.${role} are set; keep templates.${role}.path`)
        continue
      }
      templateFiles.set(role, { keyPath: [...keyPath, `${role}_template`], relative: legacy })
    }
    for (const [templateName, entry] of Object.entries(variant.templates ?? {})) {
      templateFiles.set(templateName, { keyPath: [...keyPath, "templates", templateName, "path"], relative: entry.path })
    }
    const templateKeys = new Map<string, string>()
    for (const [templateName, file] of templateFiles) {
      const absolute = resolvePath(file.keyPath, file.relative)
      const source = input.readFile(absolute)
      if (source === undefined) {
        report(file.keyPath, `template file not found: ${absolute}`)
        continue
      }
      const key = templateKey(functionName, name, templateName)
      templates.push({ key, source, origin: formatIssue({ file: merged.fileOf(file.keyPath), path: file.keyPath, message: absolute }) })
      templateKeys.set(templateName, key)
      addReferencedTemplates(file.keyPath, absolute, source)
    }
    for (const schemaName of schemas.keys()) {
      if (!templateFiles.has(schemaName)) {
        report(keyPath, `the function has schemas.${schemaName} but this variant has no template "${schemaName}" (templates.${schemaName}.path)`)
      }
    }
    checkPointers([...keyPath, "extra_body"], variant.extra_body)
    checkHeaders([...keyPath, "extra_headers"], variant.extra_headers)
    const params: Record<string, unknown> = {}
    for (const param of inferenceParamNames) {
      if (variant[param] !== undefined) params[param] = variant[param]
    }
    const defaultJsonMode = fn.type === "json" ? (fn.output_schema === undefined ? "on" : "strict") : "off"
    return {
      name,
      type: "chat_completion",
      weight: variant.weight ?? (anyWeight ? 0 : 1),
      model: variant.model,
      templates: templateKeys,
      jsonMode: variant.json_mode ?? defaultJsonMode,
      params: params as InferenceParams,
      retries: { numRetries: variant.retries?.num_retries ?? 0, maxDelayS: variant.retries?.max_delay_s ?? 10 },
      timeouts: variant.timeouts ?? {},
      extraBody: variant.extra_body ?? [],
      extraHeaders: variant.extra_headers ?? []
    }
  }

  /** registers the files a template includes or imports, when filesystem access allows it */
  function addReferencedTemplates(keyPath: KeyPath, from: string, source: string) {
    for (const reference of templateReferences(source)) {
      if (templates.some((template) => template.key === reference)) continue
      if (!gateway.templateFilesystemAccess) {
        report(keyPath, `template ${from} loads "${reference}", which needs gateway.template_filesystem_access = true`)
        continue
      }
      const absolute = path.resolve(templateBasePath ?? path.dirname(merged.fileOf(keyPath) ?? from), reference)
      const referenced = input.readFile(absolute)
      if (referenced === undefined) {
        report(keyPath, `template ${from} loads "${reference}", but ${absolute} does not exist`)
        continue
      }
      templates.push({ key: reference, source: referenced, origin: absolute })
      addReferencedTemplates(keyPath, absolute, referenced)
    }
  }

  // credentials of every provider a positive-weight variant can reach must be present now
  for (const [functionName, fn] of functions) {
    for (const [variantName, variant] of fn.variants) {
      if (variant.weight <= 0) continue
      const model = models.get(variant.model)
      const providers = model !== undefined
        ? [...model.providers.values()]
        : shorthandProviders(variant.model, input.env)
      for (const provider of providers) {
        if (provider.credential.kind === "missing_env") {
          report(
            ["functions", functionName, "variants", variantName, "model"],
            `model "${variant.model}" uses provider "${provider.name}", whose credential environment variable ${provider.credential.name} is not set`
          )
        }
      }
    }
  }

  // [rate_limiting]
  const rawRateLimiting = decodeAt(decodeRateLimiting, raw.rate_limiting ?? {}, ["rate_limiting"]) ?? {}
  const rules: Array<RateLimitRule> = []
  ;(rawRateLimiting.rules ?? []).forEach((table, index) => {
    const keyPath = ["rate_limiting", "rules", index]
    const decoded = decodeAt(decodeRateLimitRule, table, keyPath)
    if (decoded === undefined) return
    const rule = rateLimitRule(index, decoded)
    if ("path" in rule) report([...keyPath, ...rule.path], rule.message)
    else rules.push(rule)
  })

  const compiled = TemplateEngine.compile(templates)
  if ("errors" in compiled) {
    for (const error of compiled.errors) issues.push({ path: [], message: `${error.origin}: ${error.message}` })
  }
  if (issues.length > 0 || "errors" in compiled) return { errors: issues.map(formatIssue) }
  return {
    config: {
      gateway,
      models,
      functions,
      tools,
      metrics,
      rateLimiting: { enabled: rawRateLimiting.enabled ?? true, rules },
      templates: compiled.engine,
      env: input.env
    }
  }
}

/** The single provider of a `<provider_type>::<model>` short-hand model. */
export const shorthandProviders = (
  name: string,
  env: Readonly<Record<string, string | undefined>>
): ReadonlyArray<ProviderConfig> => {
  const shorthand = parseShorthandModel(name)
  if (shorthand === undefined) return []
  const definition = providerTypes.get(shorthand.type)!
  return [{
    name: shorthand.type,
    type: shorthand.type,
    modelName: shorthand.model,
    credential: resolveCredential(definition.defaultCredential, env),
    extraBody: [],
    extraHeaders: [],
    timeouts: {},
    settings: {}
  }]
}
