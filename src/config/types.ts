/**
 * The validated configuration: what the gateway runs on once start-up succeeded. Built by
 * `buildConfig` from the raw TOML; every reference in it has been checked.
 */
import type { OidcSettings } from "../auth/oidcRules.ts"
import type { StorageKind } from "../api/inference.ts"
import type { CostRule, ModelPrices } from "../inference/cost.ts"
import type { ExtraBodyEdit, ExtraHeaderEdit } from "../inference/extraBody.ts"
import type { ToolChoice, ToolDefinition } from "../inference/types.ts"
import type { InferenceParams, JsonMode } from "../inference/params.ts"
import type { TemplateEngine } from "../inference/templates.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import type { Budget } from "../budgets/budget.ts"
import type { RateLimitRule } from "../ratelimit/rules.ts"
import type { Credential } from "./credentials.ts"
import type { Timeouts } from "./raw.ts"

export type { Timeouts } from "./raw.ts"

export interface ObservabilitySettings {
  /** false turns storage off even when GATEWAY_ANALYTICS_DB_URL is set */
  readonly enabled: boolean
  /** which database stores observability (`auto`: GATEWAY_ANALYTICS_DB_URL decides) */
  readonly backend: ObservabilityBackend
  readonly disableAutomaticMigrations: boolean
  /** a batch is written when this many rows wait... */
  readonly maxRows: number
  /** ...or this long after the last flush */
  readonly flushIntervalMs: number
  /** a batch holds at most this many bytes of encoded rows (one larger unit goes alone) */
  readonly maxBatchBytes: number
  /** past this many queued writes (a database that is down), new ones are dropped and counted */
  readonly maxQueued: number
  /** ...or past this many bytes of encoded rows */
  readonly maxQueuedBytes: number
  /**
   * the largest row stored, in bytes of its JSON text: a larger one is cut down (raw provider
   * payloads first, then the longest texts), marked, logged and counted
   */
  readonly maxRowBytes: number
  /** `[gateway.observability.durable_queue]`: the write queue's log on disk; undefined: in memory only */
  readonly durableQueue: DurableQueueSettings | undefined
}

/** `[gateway.observability.durable_queue]`: where and how the write queue keeps its units on disk */
export interface DurableQueueSettings {
  /** the folder of the logs, one per process (relative: to the working directory) */
  readonly path: string
  /** `batch`: the appends of a turn synced together after their answers; `always`: each before its answer; `never`: the OS's */
  readonly fsync: "batch" | "always" | "never"
  /** `batch`: the least time between two syncs (the appends since the last are synced together) */
  readonly fsyncIntervalMs: number
  /** a process's log holds at most this many bytes: past it, writes are dropped as if the queue were full */
  readonly maxBytes: number
  /** a segment file takes no more appends past this size; deleted once all its units are written */
  readonly segmentBytes: number
  /** how often the folder is searched for the logs of dead processes (besides at start) */
  readonly replayIntervalMs: number
}

/** `[gateway.embedded_database]`: the free-space watch of a `pglite://` database's folder */
export interface EmbeddedDatabaseSettings {
  /** writes pause below this many free bytes; undefined: the larger of 1% of the filesystem and 256 MiB, at most 10% of it; 0: never */
  readonly minFreeBytes: number | undefined
  readonly freeSpaceCheckIntervalMs: number
}

/** `[gateway.cache]`: the model answer cache */
export interface CacheSettings {
  /** with authentication on, whether callers with different API keys may share entries */
  readonly shareAcrossApiKeys: boolean
  /** a lookup that takes longer is abandoned and the provider called */
  readonly lookupTimeoutMs: number
  /** where entries live: the analytics database (`auto`, or the backend it must be), or Valkey/Redis */
  readonly backend: CacheBackend
  /** `[gateway.cache.valkey] ttl_s`: how long an entry lives in Valkey */
  readonly valkeyTtlS: number
}

export type CacheBackend = "auto" | "clickhouse" | "postgres" | "valkey"

export interface AuthSettings {
  /** a valid API key is required on every endpoint but /status and /health */
  readonly enabled: boolean
  /** how long a verified key is trusted before the database is asked again (at most 2 s) */
  readonly cacheTtlMs: number
  /** failed authentications one client address may make per minute before 429s (0: no limit) */
  readonly maxFailedAttemptsPerMinute: number
}

/** `[gateway.export.otlp.traces]`: the collector's address comes from the OTEL_EXPORTER_OTLP_* variables */
export interface TraceExportSettings {
  readonly enabled: boolean
  /** sent with every export; a request's own extra headers win on equal names */
  readonly extraHeaders: Readonly<Record<string, string>>
  /** the share of requests traced (0 to 1) among those whose `traceparent` does not decide */
  readonly sampleRatio: number
}

/**
 * `[gateway.relay]`: every model call (but those of models with `skip_relay`) is made by
 * another gateway, reached as a `gateway` provider (`config/relay.ts`).
 */
export interface RelaySettings {
  readonly gatewayUrl: string
  /** the other gateway's API key (`api_key_location`) */
  readonly credential: Credential
  /** the caller's dynamic credentials go along (`forward_credentials`) */
  readonly forwardCredentials: boolean
}

export interface GatewaySettings {
  readonly bindAddress: { readonly host: string; readonly port: number }
  /** every route is served under this prefix (`/v2` -> `/v2/inference`); "" for none */
  readonly basePath: string
  readonly debug: boolean
  readonly maxRequestBodyBytes: number
  /** bytes of request bodies being received at once, over every connection; past it 503 */
  readonly maxRequestBytesInFlight: number
  /** open client connections; more are refused */
  readonly maxConnections: number
  /** processes serving the port; "auto": one per core (the command line's --workers wins) */
  readonly workers: number | "auto"
  /** send `gateway-overhead-ms` (the request's added latency) on /inference and the OpenAI route */
  readonly overheadHeader: boolean
  /** a surface's built-in tools on a provider of another family: dropped (with a `gateway-warning` header) or refused */
  readonly unsupportedBuiltinTools: "drop" | "refuse"
  /**
   * `stream_keepalive_ms`: an Anthropic stream that wrote nothing for this long writes a ping;
   * one whose provider has not started after this (at most 5 s) is answered 200 and pinged
   */
  readonly streamKeepaliveMs: number
  readonly metrics: { readonly requireAuth: boolean }
  /** the web UI at `<base_path>/ui`; how long its sessions last (seconds from sign-in) */
  readonly ui: { readonly enabled: boolean; readonly sessionTtlS: number; readonly oidc?: OidcSettings | undefined }
  /** a client must send its whole request (headers and body) within this */
  readonly requestReadTimeoutMs: number
  /** `drain_delay_ms`: on SIGTERM, /health answers 503 `draining` this long (requests still served) before the listener closes */
  readonly drainDelayMs: number
  /** the upper bound of every model call (plain or streamed), whatever else is configured */
  readonly globalOutboundHttpTimeoutMs: number
  /** a provider's answer (a plain body, or a whole stream) may not exceed this */
  readonly maxProviderResponseBytes: number
  /** one streamed event (one SSE line) may not exceed this */
  readonly maxProviderStreamEventBytes: number
  readonly cache: CacheSettings
  /** `[gateway.batch]`: seconds between background polls of a pending batch (0: none) */
  readonly batch: { readonly pollIntervalS: number }
  /**
   * `[gateway.tasks]`: seconds a durable task may be declined by gateways whose configurations
   * lack its function, variant or model before it fails saying so (once every live gateway of
   * its kind has declined it)
   */
  readonly tasks: { readonly unrunnableTimeoutS: number }
  readonly templateFilesystemAccess: boolean
  /** whether requests may name `dummy::<model>` short-hands (configured models of type "dummy" work either way) */
  readonly dummyShorthands: boolean
  readonly observability: ObservabilitySettings
  readonly embeddedDatabase: EmbeddedDatabaseSettings
  readonly traceExport: TraceExportSettings
  readonly auth: AuthSettings
  readonly relay?: RelaySettings | undefined
  /** TensorZero's `gateway.unstable_error_json`: error bodies also carry the error as `error_json` */
  readonly errorJson: boolean
  /** `[postgres] connection_pool_size` (TensorZero's): the most connections each Postgres pool of this process opens; the drivers' default when unset */
  readonly postgresPoolSize?: number | undefined
}

export interface ProviderConfig {
  readonly name: string
  readonly type: string
  readonly modelName: string
  readonly credential: Credential
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
  readonly timeouts: Timeouts
  /** `cost` rules, checked; none (or absent) when the provider has no cost */
  readonly cost?: ReadonlyArray<CostRule> | undefined
  /** `pricing` (of the provider, else of its model): the prices its `cost` rules were made from when it has none of its own; the budgets' estimate reads them */
  readonly prices?: ModelPrices | undefined
  /** `provider_tools`: tools the provider runs itself, sent with every call to it (before a request's own) */
  readonly providerTools?: ReadonlyArray<unknown> | undefined
  /** the fields specific to the provider type, as its schema decoded them */
  readonly settings: Readonly<Record<string, unknown>>
  /** the environment captured at start-up, for types whose settings default from it (AWS's region) */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

export interface ModelConfig {
  readonly name: string
  readonly routing: ReadonlyArray<string>
  readonly providers: ReadonlyMap<string, ProviderConfig>
  readonly timeouts: Timeouts
}

/** `[embedding_models.<name>]`: providers tried in routing order, within `timeout_ms` */
export interface EmbeddingModelConfig {
  readonly name: string
  readonly routing: ReadonlyArray<string>
  readonly providers: ReadonlyMap<string, ProviderConfig>
  readonly timeoutMs?: number | undefined
}

export interface RetryConfig {
  readonly numRetries: number
  readonly maxDelayS: number
}

/**
 * What one model call of a variant is made with: the settings of a `chat_completion` variant,
 * shared by chain-of-thought and DICL variants and by the evaluator or fuser of the sampling
 * types. `name` is the variant's (what `extra_body` entries scoped by `variant_name` match).
 */
export interface ModelCallConfig {
  readonly name: string
  readonly model: string
  /** template name -> key in the template engine */
  readonly templates: ReadonlyMap<string, string>
  readonly jsonMode: JsonMode
  readonly params: InferenceParams
  readonly retries: RetryConfig
  readonly timeouts: Timeouts
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
  /**
   * role -> key of the template its plain text is rendered with, as `<role>_text` (TensorZero's
   * `input_wrappers.<role>`, and its legacy `<role>_template` for a role without a schema)
   */
  readonly textWrappers?: ReadonlyMap<string, string> | undefined
}

/** `chat_completion`, and `experimental_chain_of_thought` (the model thinks before it answers: `inference/variants/chainOfThought.ts`) */
export interface ChatCompletionVariant extends ModelCallConfig {
  readonly type: "chat_completion" | "experimental_chain_of_thought"
  /** 0: sampled only when pinned with `variant_name` */
  readonly weight: number
}

/** `experimental_dynamic_in_context_learning`: the k stored examples nearest the input go before it */
export interface DiclVariant extends ModelCallConfig {
  readonly type: "experimental_dynamic_in_context_learning"
  readonly weight: number
  /** a configured embedding model or a short-hand */
  readonly embeddingModel: string
  readonly k: number
  /** cosine distance past which an example is left out */
  readonly maxDistance?: number | undefined
}

/** `experimental_best_of_n_sampling` (an evaluator picks one candidate) and `experimental_mixture_of_n_sampling` (a fuser combines them) */
export interface SamplingVariant {
  readonly name: string
  readonly type: "experimental_best_of_n_sampling" | "experimental_mixture_of_n_sampling"
  readonly weight: number
  /** variant names of the same function, repeats allowed: run concurrently */
  readonly candidates: ReadonlyArray<string>
  /** the evaluator (best-of-n) or the fuser (mixture-of-n) */
  readonly judge: ModelCallConfig
  /** the whole variant's limits, as any variant's */
  readonly timeouts: Timeouts
  /** `timeout_s`: candidates not done by then are left out (ms) */
  readonly candidateTimeoutMs?: number | undefined
}

/** a variant whose answer is one model call's (the others combine several) */
export type SingleCallVariant = ChatCompletionVariant | DiclVariant

export type VariantConfig = SingleCallVariant | SamplingVariant

export type VariantType = VariantConfig["type"]

export const isSamplingVariant = (variant: VariantConfig): variant is SamplingVariant =>
  variant.type === "experimental_best_of_n_sampling" || variant.type === "experimental_mixture_of_n_sampling"

/** the block of a sampling variant that calls the model: `evaluator` or `fuser` */
export const judgeField = (variant: SamplingVariant): "evaluator" | "fuser" =>
  variant.type === "experimental_best_of_n_sampling" ? "evaluator" : "fuser"

/** the model a variant calls itself (a sampling variant's candidates call theirs), and where it is written */
export const variantModel = (variant: VariantConfig): { readonly model: string; readonly keyPath: ReadonlyArray<string> } =>
  isSamplingVariant(variant)
    ? { model: variant.judge.model, keyPath: [judgeField(variant), "model"] }
    : { model: variant.model, keyPath: ["model"] }

/** the templates a variant renders the input with itself (a sampling variant's: its evaluator's or fuser's) */
export const variantTemplates = (variant: VariantConfig): ReadonlyMap<string, string> =>
  isSamplingVariant(variant) ? variant.judge.templates : variant.templates

export interface FunctionConfig {
  readonly name: string
  readonly type: "chat" | "json"
  readonly description?: string | undefined
  /** schema name (`system`, `user`, `assistant` or custom) -> validator of the template arguments */
  readonly schemas: ReadonlyMap<string, JsonSchemaValidator>
  /** json functions: the output schema (accepts anything when none is configured) */
  readonly outputSchema?: JsonSchemaValidator | undefined
  readonly tools: ReadonlyArray<string>
  readonly toolChoice: ToolChoice
  readonly parallelToolCalls?: boolean | undefined
  readonly variants: ReadonlyMap<string, VariantConfig>
  /** `[functions.<fn>.experimentation]`: when present, how variants are drawn (their `weight`s are ignored) */
  readonly experimentation?: ExperimentationConfig | undefined
  /** `[functions.<fn>.evaluators.<name>]`: what `gateway evaluate --evaluator-names` and `/v1/evaluations/run` score with */
  readonly evaluators: ReadonlyMap<string, EvaluatorConfig>
}

/**
 * Experimentation: candidates drawn by weight, then the fallbacks in order. Adaptive
 * experimentation (`adaptive`) draws its candidates by the probabilities its bandit last
 * stored (src/experimentation/); their weights here (all 1) are the uniform draw before any.
 */
export interface ExperimentationConfig {
  readonly candidates: ReadonlyArray<{ readonly name: string; readonly weight: number }>
  readonly fallbacks: ReadonlyArray<string>
  readonly adaptive?: AdaptiveExperimentation | undefined
}

/** `type = "adaptive"` (TensorZero's `track_and_stop`): the bandit's settings */
export interface AdaptiveExperimentation {
  /** a configured metric (checked after every metric is known, evaluators' included) */
  readonly metric: string
  readonly epsilon: number
  readonly delta: number
  readonly minProb: number
  readonly minSamplesPerVariant: number
  readonly updatePeriodS: number
}

/** What every evaluator has, whatever its type. */
interface EvaluatorCommon {
  readonly name: string
  /** the metric its scores are stored under as feedback (src/evaluations/names.ts) */
  readonly metricName: string
  /** boolean evaluators score true/false, float evaluators a number */
  readonly outputType: "boolean" | "float"
  /** which way is better: `exact_match`, `regex` and `tool_use` are `max` */
  readonly optimize: "max" | "min"
  /**
   * `cutoff`: the mean a run must reach (`optimize = "max"`) or stay under (`"min"`) for
   * `gateway evaluate` to exit 0; the command line's `--cutoffs` wins
   */
  readonly cutoff?: number | undefined
}

/** A regular expression as written, compiled once (linear-time matching: re2js). */
export interface ConfiguredRegex {
  readonly source: string
  /** whether `text` holds a match (anywhere: anchor the pattern to match the whole text) */
  readonly test: (text: string) => boolean
}

export type ToolUseBehavior = "none" | "any" | "none_of" | "any_of" | "all_of"

export type EvaluatorConfig =
  /** the output equals the datapoint's reference output (chat: the text blocks; json: the parsed values) */
  | EvaluatorCommon & { readonly type: "exact_match" }
  /** the output text matches `mustMatch` and does not match `mustNotMatch` (at least one is set) */
  | EvaluatorCommon & {
    readonly type: "regex"
    readonly mustMatch?: ConfiguredRegex | undefined
    readonly mustNotMatch?: ConfiguredRegex | undefined
  }
  /** which tools the output called, against `tools` */
  | EvaluatorCommon & {
    readonly type: "tool_use"
    readonly behavior: ToolUseBehavior
    readonly tools: ReadonlyArray<string>
  }
  /**
   * TensorZero's evaluator that runs a TypeScript function: loaded so that its configuration
   * loads, never run here (an evaluation run or GEPA naming it is refused)
   */
  | EvaluatorCommon & { readonly type: "typescript" }
  /** another model judges the output; its answer `{thinking, score}` is the score */
  | EvaluatorCommon & {
    readonly type: "llm_judge"
    readonly includeReferenceOutput: boolean
    readonly inputFormat: "serialized" | "messages"
    readonly description?: string | undefined
    /**
     * the built-in json function the judge runs as (`gateway::llm_judge::<scope>::<name>`), in
     * `GatewayConfig.functions`: its variants are the judge's, each with its `system_instructions`
     * as a literal system template, and its output schema is `judgeOutputSchema`
     */
    readonly judgeFunctionName: string
  }

/** `[evaluations.<name>]`: an inference evaluation of one function with its own evaluators. */
export interface EvaluationConfig {
  readonly name: string
  readonly type: "inference"
  readonly description?: string | undefined
  readonly functionName: string
  readonly evaluators: ReadonlyMap<string, EvaluatorConfig>
}

export interface MetricConfig {
  readonly name: string
  readonly description?: string | undefined
  readonly type: "boolean" | "float"
  readonly level: "inference" | "episode"
  readonly optimize: "max" | "min"
}

export interface RateLimitingSettings {
  readonly enabled: boolean
  readonly rules: ReadonlyArray<RateLimitRule>
  /** `default_cost`: reserved before each call under a cost limit, charged for a call that reports no cost */
  readonly defaultCost: number
  /** `[[rate_limiting.budgets]]` (src/config/budgets.ts); empty when `enabled = false` */
  readonly budgets: ReadonlyArray<Budget>
}

export interface GatewayConfig {
  readonly gateway: GatewaySettings
  readonly models: ReadonlyMap<string, ModelConfig>
  readonly embeddingModels: ReadonlyMap<string, EmbeddingModelConfig>
  readonly functions: ReadonlyMap<string, FunctionConfig>
  readonly tools: ReadonlyMap<string, ToolDefinition>
  readonly metrics: ReadonlyMap<string, MetricConfig>
  /** `[evaluations.<name>]` */
  readonly evaluations: ReadonlyMap<string, EvaluationConfig>
  readonly rateLimiting: RateLimitingSettings
  readonly templates: TemplateEngine
  /** what `<type>::<model>` models named in requests run with, by type: the credential (resolved at start-up) and the type's settings */
  readonly shorthands: ReadonlyMap<string, ShorthandDefault>
  /** `[object_storage]`: where input files are written; absent: they stay inline in the stored input */
  readonly objectStorage?: ObjectStorageSettings | undefined
}

/** `[object_storage]` as validated: the storage kind (as stored inferences name it) and, for S3, its keys */
export interface ObjectStorageSettings {
  readonly kind: StorageKind
  /** `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY`; absent: the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`, profiles, roles) */
  readonly s3Credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined
}

/** What a type's short-hand models (`<type>::<model>`) run with: its credential, resolved at start-up (requests name them later), and its settings (`[provider_types.<type>.batch]`). */
export interface ShorthandDefault {
  readonly credential: Credential
  readonly settings: Readonly<Record<string, unknown>>
}

/** A function every configuration has besides its own (GEPA's), with its system template's key and source. */
export interface BuiltinFunction {
  readonly fn: FunctionConfig
  readonly systemKey: string
  readonly systemSource: string
}

/** `[gateway.observability] backend`: which database the analytics URL names, or found from it */
export type ObservabilityBackend = "auto" | "clickhouse" | "postgres"
