/**
 * Configurations written for TensorZero (with `tensorzero` renamed `gateway`) load: the keys
 * TensorZero accepts and the gateway did not, the keys TensorZero deprecated (accepted with a
 * warning naming their replacement), and unknown keys, which stay errors naming the key.
 */
import * as Result from "effect/Result"
import { parse as parseToml } from "smol-toml"
import { describe, expect, it } from "vitest"
import type { InferenceRequest } from "../../src/api/inference.ts"
import { templateKey } from "../../src/inference/templates.ts"
import { resolveTools } from "../../src/inference/tools.ts"
import { applicableRules } from "../../src/ratelimit/rules.ts"
import { build, type BuildOptions, buildErrors, buildOk, configPath, functionOf, json, variantOf } from "./fixtures.ts"

const F = configPath

/** the configuration and its warnings, failing with the problems when it does not load */
const buildWithWarnings = (toml: string, options: BuildOptions = {}) => {
  const result = build(toml, options)
  if ("errors" in result) throw new Error(`expected a valid configuration, got:\n${result.errors.join("\n")}`)
  return result
}

/** the single problem */
const onlyProblem = (errors: ReadonlyArray<string>): string => {
  expect(errors).toHaveLength(1)
  return errors[0]
}

const queryParams = json({
  type: "object",
  properties: { sql: { type: "string" } },
  required: ["sql"],
  additionalProperties: false
})

/** A support assistant as a TensorZero user would write it (models with fallbacks, legacy schema fields, tools, metrics, limits). */
const supportConfig = `
[gateway]
bind_address = "[::]:3000"
debug = false
disable_pseudonymous_usage_analytics = true
template_filesystem_access.base_path = "."
observability.enabled = true
observability.async_writes = true
observability.backend = "auto"
observability.batch_writes = { enabled = true, flush_interval_ms = 200, max_rows = 500, max_rows_postgres = 100 }
export.otlp.traces.enabled = false

# ┌──────────────────────────── MODELS ────────────────────────────┐
[models.gpt-4o-mini]
routing = ["openai", "azure"]
timeouts = { non_streaming.total_ms = 15000, streaming.ttft_ms = 3000 }

[models.gpt-4o-mini.providers.openai]
type = "openai"
model_name = "gpt-4o-mini-2024-07-18"

[models.gpt-4o-mini.providers.azure]
type = "openai"
model_name = "gpt-4o-mini"
api_base = "https://example.openai.azure.com/openai/v1/"
api_key_location = "env::AZURE_OPENAI_API_KEY"
timeouts = { non_streaming = { total_ms = 10000 } }

[models."llama-3.1-8b-instruct"]
routing = ["vllm"]

[models."llama-3.1-8b-instruct".providers.vllm]
type = "openai"
model_name = "meta-llama/Llama-3.1-8B-Instruct"
api_base = "http://vllm.internal:8000/v1/"
api_key_location = "none"
extra_body = [{ pointer = "/top_k", value = 40 }]

# ┌─────────────────────────── FUNCTIONS ──────────────────────────┐
[functions.draft_email]
type = "chat"
description = "Drafts a reply to a customer"
system_schema = "functions/draft_email/system_schema.json"
tools = ["query-database"]
tool_choice = "auto"

[functions.draft_email.variants.gpt_4o_mini]
type = "chat_completion"
model = "gpt-4o-mini"
system_template = "functions/draft_email/gpt_4o_mini/system_template.minijinja"
temperature = 0.7
max_tokens = 400
retries = { num_retries = 2, max_delay_s = 5 }
weight = 0.8

[functions.draft_email.variants.llama]
type = "chat_completion"
model = "llama-3.1-8b-instruct"
system_template = "functions/draft_email/llama/system_template.minijinja"
weight = 0.2
timeouts = { non_streaming = { total_ms = 20000 }, streaming = { ttft_ms = 2000 } }

[functions.extract_data]
type = "json"
output_schema = "functions/extract_data/output_schema.json"

[functions.extract_data.variants.strict]
type = "chat_completion"
model = "openai::gpt-4o-mini"
json_mode = "strict"
templates.system.path = "functions/extract_data/strict/system.minijinja"

[functions.generate_query]
type = "chat"
tool_choice = { specific = "query-database" }
parallel_tool_calls = false

[functions.generate_query.variants.baseline]
type = "chat_completion"
model = "gpt-4o-mini"

# ┌───────────────────────── TOOLS, METRICS ───────────────────────┐
[tools.query-database]
description = "Runs a read-only SQL query"
parameters = "tools/query-database.json"
strict = true

[metrics.task_success]
type = "boolean"
optimize = "max"
level = "episode"

[metrics.user_rating]
type = "float"
optimize = "max"
level = "inference"
description = "The rating the customer gave the reply"

# ┌────────────────────────── RATE LIMITS ─────────────────────────┐
[rate_limiting]
enabled = true

[[rate_limiting.rules]]
always = true
tokens_per_hour = 1000000

[[rate_limiting.rules]]
priority = 0
model_inferences_per_minute = 60
scope = [{ tag_key = "user_id", tag_value = "gateway::each" }]

[[rate_limiting.rules]]
priority = 1
model_inferences_per_minute = { capacity = 600, refill_rate = 300 }
scope = [{ tag_key = "user_id", tag_value = "vip" }]
`

const supportFiles = {
  "/cfg/functions/draft_email/system_schema.json": json({ type: "object", properties: { customer: { type: "string" } }, required: ["customer"] }),
  "/cfg/functions/draft_email/gpt_4o_mini/system_template.minijinja": `{% include "partials/tone.minijinja" %} Write to {{ customer }}.`,
  "/cfg/functions/draft_email/llama/system_template.minijinja": "Write to {{ customer }}, briefly.",
  "/cfg/partials/tone.minijinja": "Be warm.",
  "/cfg/functions/extract_data/output_schema.json": json({ type: "object", properties: { email: { type: "string" } } }),
  "/cfg/functions/extract_data/strict/system.minijinja": "Extract the sender's email address.",
  "/cfg/tools/query-database.json": queryParams
}

const supportEnv = { OPENAI_API_KEY: "sk-test", AZURE_OPENAI_API_KEY: "azure-test" }

describe("a TensorZero configuration (tensorzero renamed gateway) loads", () => {
  const { config, warnings } = buildWithWarnings(supportConfig, { files: supportFiles, env: supportEnv })

  it("with its models, routing, timeouts and providers", () => {
    expect(warnings).toEqual([])
    const gpt = config.models.get("gpt-4o-mini")!
    expect(gpt.routing).toEqual(["openai", "azure"])
    expect(gpt.timeouts).toEqual({ non_streaming: { total_ms: 15000 }, streaming: { ttft_ms: 3000 } })
    expect(gpt.providers.get("azure")!.credential).toEqual({ kind: "static", value: "azure-test" })
    expect(config.models.get("llama-3.1-8b-instruct")!.providers.get("vllm")!.credential).toEqual({ kind: "none" })
    expect(config.gateway.bindAddress).toEqual({ host: "::", port: 3000 })
  })

  it("with its functions, variants (weights, legacy templates), tools and metrics", () => {
    expect(variantOf(config, "draft_email", "gpt_4o_mini").weight).toBe(0.8)
    expect(variantOf(config, "draft_email", "llama").timeouts).toEqual({ non_streaming: { total_ms: 20000 }, streaming: { ttft_ms: 2000 } })
    expect(variantOf(config, "extract_data", "strict").jsonMode).toBe("strict")
    expect(functionOf(config, "generate_query").toolChoice).toEqual({ type: "specific", name: "query-database" })
    expect(config.tools.get("query-database")!.strict).toBe(true)
    expect(config.metrics.get("user_rating")).toEqual({
      name: "user_rating",
      type: "float",
      level: "inference",
      optimize: "max",
      description: "The rating the customer gave the reply"
    })
  })

  it("with template_filesystem_access.base_path alone enabling {% include %}", () => {
    expect(config.gateway.templateFilesystemAccess).toBe(true)
    const rendered = config.templates.render(templateKey("draft_email", "gpt_4o_mini", "system"), { customer: "Ada" })
    expect(rendered).toEqual({ text: "Be warm. Write to Ada." })
  })

  it("with the observability settings that change nothing here, and backend", () => {
    expect(config.gateway.observability).toMatchObject({ enabled: true, backend: "auto", maxRows: 500, flushIntervalMs: 200 })
  })

  it("with a rule that always applies beside the highest-priority rules", () => {
    const rules = config.rateLimiting.rules
    expect(rules.map((rule) => rule.priority)).toEqual(["always", 0, 1])
    const indexes = (tags: Record<string, string>) => applicableRules(rules, { workspace: "default", tags }).map((rule) => rule.index)
    expect(indexes({})).toEqual([0])
    expect(indexes({ user_id: "ada" })).toEqual([0, 1])
    // the vip rule's higher priority overrides the each-rule, not the always-rule
    expect(indexes({ user_id: "vip" })).toEqual([0, 2])
  })
})

describe("TensorZero keys the gateway accepts", () => {
  const dummyFunction = (variantExtra: string) => `
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::hello"
${variantExtra}
`

  it("timeouts with only streaming.total_ms, or an empty non_streaming, at every level", () => {
    const { config, warnings } = buildWithWarnings(`
[models.m]
routing = ["p"]
timeouts = { non_streaming = {} }
[models.m.providers.p]
type = "dummy"
model_name = "hello"
timeouts = { streaming = { ttft_ms = 100, total_ms = 900 } }
` + dummyFunction(`timeouts = { streaming = { total_ms = 500 } }`))
    expect(variantOf(config, "f", "v").timeouts).toEqual({ streaming: { total_ms: 500 } })
    expect(config.models.get("m")!.timeouts).toEqual({ non_streaming: {} })
    expect(config.models.get("m")!.providers.get("p")!.timeouts).toEqual({ streaming: { ttft_ms: 100, total_ms: 900 } })
    expect(warnings).toEqual([])
  })

  it("observability.backend, async_writes and batch_writes.enabled / max_rows_postgres", () => {
    const { config, warnings } = buildWithWarnings(`
[gateway.observability]
backend = "postgres"
async_writes = false
batch_writes = { enabled = false, max_rows_postgres = 5 }
`)
    expect(warnings).toEqual([])
    expect(config.gateway.observability.backend).toBe("postgres")
    expect(buildErrors(`[gateway.observability]\nbackend = "mysql"\n`)[0]).toMatch(/^\/cfg\/gateway\.toml: gateway\.observability\.backend: /)
  })

  it("a rule with always = true instead of a priority; not both, and one of them", () => {
    const rules = buildOk(`[[rate_limiting.rules]]\nalways = true\nmodel_inferences_per_second = 5\n`).rateLimiting.rules
    expect(rules[0].priority).toBe("always")
    // always = false is a rule with a priority
    expect(buildOk(`[[rate_limiting.rules]]\nalways = false\npriority = 2\ntokens_per_day = 5\n`).rateLimiting.rules[0].priority).toBe(2)
    expect(buildErrors(`[[rate_limiting.rules]]\nalways = true\npriority = 1\ntokens_per_day = 5\n`)).toEqual([
      `${F}: rate_limiting.rules[0].always: a rule has either always = true or a priority, not both`
    ])
    expect(buildErrors(`[[rate_limiting.rules]]\nalways = false\ntokens_per_day = 5\n`)).toEqual([
      `${F}: rate_limiting.rules[0].priority: missing field (or always = true for a rule that always applies)`
    ])
  })

  it("an always rule gets its own buckets, apart from a priority rule with the same limits", () => {
    const [always, prioritised] = buildOk(`
[[rate_limiting.rules]]
always = true
tokens_per_day = 5
[[rate_limiting.rules]]
priority = 0
tokens_per_day = 5
`).rateLimiting.rules
    expect(always.id).not.toBe(prioritised.id)
  })

  it("names an unknown model's header in valid TOML, quoted when the name needs it", () => {
    const name = "acme::accounts/acme/models/llama-v3p1-8b-instruct"
    const errors = buildErrors(`
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "${name}"
`)
    expect(errors).toHaveLength(1)
    const header = /define (\[[^\]]+\]) or use/.exec(errors[0])?.[1]
    expect(header).toBe(`[models."${name}"]`)
    // pasted as is, the header names the model
    expect(Object.keys((parseToml(`${header}\nrouting = []\n`) as any).models)).toEqual([name])
    expect(buildErrors(`
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "plain_name"
`)[0]).toContain("define [models.plain_name] or use")
  })
})

describe("tool_choice.specific naming a tool the function does not list", () => {
  const config = buildOk(`
[tools.lookup]
name = "lookup_v2"
description = "Looks up an order"
parameters = "tools/query.json"

[functions.agent]
type = "chat"
tool_choice = { specific = "submit_order" }
[functions.agent.variants.v]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.lookup_agent]
type = "chat"
tool_choice = { specific = "lookup" }
[functions.lookup_agent.variants.v]
type = "chat_completion"
model = "dummy::offered_tool"
`, { files: { "/cfg/tools/query.json": queryParams } })

  const resolve = (functionName: string, fields: Partial<InferenceRequest> = {}) =>
    resolveTools(functionOf(config, functionName), { input: {}, ...fields }, config.tools)

  it("is refused per request when the request does not bring the tool", () => {
    for (const fields of [{}, { additional_tools: [{ name: "other", description: "d", parameters: { type: "object" } }] }]) {
      const result = resolve("agent", fields)
      if (Result.isSuccess(result)) throw new Error(`expected a problem, got ${JSON.stringify(result.success)}`)
      const problem = result.failure
      expect(problem.path).toBe("tool_choice")
      expect(problem.message).toContain(`"submit_order"`)
    }
  })

  it("chooses the tool a request brings in additional_tools", () => {
    const tools = Result.getOrThrow(resolve("agent", { additional_tools: [{ name: "submit_order", description: "Submits", parameters: { type: "object" } }] }))
    if (tools === undefined) throw new Error("no tools")
    expect(tools.choice).toEqual({ type: "specific", name: "submit_order" })
  })

  it("chooses a configured tool the request allows, by the name the model sees", () => {
    const tools = Result.getOrThrow(resolve("lookup_agent", { allowed_tools: ["lookup"] }))
    if (tools === undefined) throw new Error("no tools")
    expect(tools.choice).toEqual({ type: "specific", name: "lookup_v2" })
    expect(Result.isFailure(resolve("lookup_agent"))).toBe(true)
  })

  it("gives way to the request's own tool_choice", () => {
    expect(resolve("agent", { tool_choice: "none" })).toEqual(Result.succeed(undefined))
  })
})

describe("keys TensorZero deprecated are accepted with a warning naming the replacement", () => {
  const withInclude = (gateway: string) => `
[gateway]
${gateway}
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::hello"
templates.system.path = "templates/system.minijinja"
`
  const files = {
    "/cfg/templates/system.minijinja": `{% include "partials/rules.minijinja" %} Be nice.`,
    "/cfg/partials/rules.minijinja": "Rule one.",
    "/cfg/shared/partials/rules.minijinja": "Shared rule."
  }
  const rendered = (gateway: string) => {
    const { config, warnings } = buildWithWarnings(withInclude(gateway), { files })
    const text = config.templates.render(templateKey("f", "v", "system"), {})
    return { text: "text" in text ? text.text : text.error, warnings }
  }

  it("gateway.enable_template_filesystem_access -> template_filesystem_access.base_path", () => {
    const { text, warnings } = rendered("enable_template_filesystem_access = true")
    expect(text).toBe("Rule one. Be nice.")
    expect(warnings).toEqual([
      `${F}: gateway.enable_template_filesystem_access: deprecated: use template_filesystem_access.base_path (base_path = "." for the configuration file's folder)`
    ])
    // false keeps access off, as it says
    expect(onlyProblem(buildErrors(withInclude("enable_template_filesystem_access = false"), { files })))
      .toContain("template_filesystem_access")
  })

  it("gateway.template_filesystem_access.enabled -> base_path alone", () => {
    const withBase = rendered(`template_filesystem_access = { enabled = true, base_path = "shared" }`)
    expect(withBase.text).toBe("Shared rule. Be nice.")
    expect(withBase.warnings).toEqual([`${F}: gateway.template_filesystem_access.enabled: deprecated: base_path alone enables access`])
    const alone = rendered(`template_filesystem_access = { enabled = true }`)
    expect(alone.text).toBe("Rule one. Be nice.")
    expect(alone.warnings[0]).toContain(`gateway.template_filesystem_access.enabled: deprecated: base_path alone enables access (base_path = "."`)
    // as in TensorZero, base_path decides: enabled = false beside it changes nothing, and the warning says so
    const contradicted = rendered(`template_filesystem_access = { enabled = false, base_path = "shared" }`)
    expect(contradicted.text).toBe("Shared rule. Be nice.")
    expect(contradicted.warnings[0]).toContain("so access is on")
  })

  it("refuses the deprecated flag beside its replacement", () => {
    const errors = buildErrors(withInclude(`enable_template_filesystem_access = true\ntemplate_filesystem_access.base_path = "."`), { files })
    expect(errors).toEqual([
      `${F}: gateway.enable_template_filesystem_access: set template_filesystem_access only (enable_template_filesystem_access is its deprecated form)`
    ])
  })
})

describe("unknown keys in a TensorZero configuration stay errors, naming the key", () => {
  it("a typo among the accepted TensorZero keys", () => {
    expect(buildErrors(`[gateway.observability]\nasync_write = true\n`)).toEqual([`${F}: gateway.observability.async_write: unknown field`])
    expect(buildErrors(`[gateway.observability.batch_writes]\nenable = true\n`)).toEqual([
      `${F}: gateway.observability.batch_writes.enable: unknown field`
    ])
    expect(buildErrors(`[gateway.template_filesystem_access]\nbase_dir = "."\n`)).toEqual([
      `${F}: gateway.template_filesystem_access.base_dir: unknown field`
    ])
    expect(buildErrors(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "dummy"
model_name = "hello"
timeouts = { streaming = { total = 5 } }
`)).toEqual([`${F}: models.m.providers.p.timeouts.streaming.total: unknown field`])
  })

  it("a misspelt priority: the unknown key, and the priority that is then missing", () => {
    expect(buildErrors(`[[rate_limiting.rules]]\nprority = 1\ntokens_per_day = 5\n`)).toEqual([
      `${F}: rate_limiting.rules[0].prority: unknown field`,
      `${F}: rate_limiting.rules[0].priority: missing field (or always = true for a rule that always applies)`
    ])
  })

  it("TensorZero sections the gateway does not implement", () => {
    const errors = buildErrors(`
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::hello"
[functions.f.experimentation]
type = "track_and_stop"
candidate_variants = ["v"]
metric = "m"
max_samples_per_variant = 100
[metrics.m]
type = "boolean"
level = "inference"
`)
    expect(errors).toEqual([
      `${F}: functions.f.experimentation.max_samples_per_variant: unknown field`
    ])
  })
})
