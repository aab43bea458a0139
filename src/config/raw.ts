/**
 * The configuration file as written (spec 2.1), as Schemas. Decoding rejects unknown keys,
 * so a typo is a start-up error rather than a silently ignored setting. Provider tables are
 * decoded by their provider type's own schema (see `providers/registry.ts`).
 */
import * as Schema from "effect/Schema"
import { RawCostRule } from "../inference/cost.ts"
import { ExtraBodyEdit, ExtraHeaderEdit } from "../inference/extraBody.ts"
import { inferenceParamFields, JsonModeSchema, RawToolChoice } from "../inference/params.ts"

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegative = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
/** a UI session lasts at most 30 days (`[gateway.ui] session_ttl_s`) */
const maxUiSessionTtlS = 30 * 24 * 60 * 60

/** every limit is optional, as in TensorZero (`streaming = { total_ms = 500 }` alone is valid) */
export const Timeouts = Schema.Struct({
  non_streaming: Schema.optional(Schema.Struct({ total_ms: Schema.optional(PositiveInt) })),
  streaming: Schema.optional(Schema.Struct({ ttft_ms: Schema.optional(PositiveInt), total_ms: Schema.optional(PositiveInt) }))
})
export type Timeouts = typeof Timeouts.Type

/** `pricing`: a model's prices per million tokens, expanded into `cost` rules per provider type (`config/pricing.ts`) */
export const RawPricing = Schema.Struct({
  input_per_million: NonNegative,
  output_per_million: NonNegative,
  /** absent: cache reads cost what input tokens cost */
  cache_read_per_million: Schema.optional(NonNegative),
  /** absent: cache writes cost what input tokens cost */
  cache_write_per_million: Schema.optional(NonNegative)
})
export type RawPricing = typeof RawPricing.Type

/** Fields every provider table has, whatever its type. */
export const providerCommonFields = {
  type: Schema.String,
  /** required unless the type names its model otherwise (`requiresModelName`) */
  model_name: Schema.optional(Schema.String),
  /** a location string or `{ default, fallback }`, checked by `parseCredentialLocation` */
  api_key_location: Schema.optional(Schema.Unknown),
  /** TensorZero's name for it on GCP types; accepted on every type */
  credential_location: Schema.optional(Schema.Unknown),
  extra_body: Schema.optional(Schema.Array(ExtraBodyEdit)),
  extra_headers: Schema.optional(Schema.Array(ExtraHeaderEdit)),
  timeouts: Schema.optional(Timeouts),
  /** what a call costs, read from the raw response (checked in `config/models.ts`, applied by `inference/pricing.ts`) */
  cost: Schema.optional(Schema.Array(RawCostRule)),
  /** the model's `pricing` for this provider (a chat model's only; `cost` rules win) */
  pricing: Schema.optional(RawPricing),
  /** tools the provider runs itself (OpenAI's Responses API's web search...), sent with every call as a request's `provider_tools` are */
  provider_tools: Schema.optional(Schema.Array(Schema.Unknown))
}

export const RawModel = Schema.Struct({
  routing: Schema.Array(Schema.String),
  providers: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)),
  timeouts: Schema.optional(Timeouts),
  /** every provider's prices unless the provider gives its own `pricing` or `cost` */
  pricing: Schema.optional(RawPricing),
  /** with `[gateway.relay]`: this model keeps its own providers */
  skip_relay: Schema.optional(Schema.Boolean)
})

const PathTable = Schema.Struct({ path: Schema.String })

/** How a model call is made, in every table that configures one (a variant, an evaluator or fuser, DICL). */
const modelCallFields = {
  json_mode: Schema.optional(JsonModeSchema),
  ...inferenceParamFields,
  retries: Schema.optional(Schema.Struct({
    num_retries: NonNegativeInt,
    max_delay_s: Schema.optional(NonNegative)
  })),
  timeouts: Schema.optional(Timeouts),
  extra_body: Schema.optional(Schema.Array(ExtraBodyEdit)),
  extra_headers: Schema.optional(Schema.Array(ExtraHeaderEdit))
}

export const RawVariant = Schema.Struct({
  type: Schema.String,
  weight: Schema.optional(NonNegative),
  model: Schema.optional(Schema.String),
  templates: Schema.optional(Schema.Record(Schema.String, PathTable)),
  system_template: Schema.optional(Schema.String),
  user_template: Schema.optional(Schema.String),
  assistant_template: Schema.optional(Schema.String),
  /** TensorZero's: a template per role that wraps that role's plain text (as `<role>_text`), for a role without a schema */
  input_wrappers: Schema.optional(Schema.Struct({
    system: Schema.optional(Schema.String),
    user: Schema.optional(Schema.String),
    assistant: Schema.optional(Schema.String)
  })),
  ...modelCallFields
})
export type RawVariant = typeof RawVariant.Type

/** The evaluator of best-of-n or the fuser of mixture-of-n: a chat_completion variant without `type` nor `weight`. */
export const RawJudgeBlock = Schema.Struct({
  model: Schema.optional(Schema.String),
  templates: RawVariant.fields.templates,
  system_template: RawVariant.fields.system_template,
  user_template: RawVariant.fields.user_template,
  assistant_template: RawVariant.fields.assistant_template,
  /** a file read as is: the judge's system prompt when it has no system template */
  system_instructions: Schema.optional(Schema.String),
  ...modelCallFields
})
export type RawJudgeBlock = typeof RawJudgeBlock.Type

export const RawSamplingVariant = Schema.Struct({
  type: Schema.String,
  weight: RawVariant.fields.weight,
  candidates: Schema.Array(Schema.String),
  evaluator: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  fuser: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  timeouts: RawVariant.fields.timeouts,
  /** TensorZero's: seconds the candidates have; those not done are left out */
  timeout_s: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type RawSamplingVariant = typeof RawSamplingVariant.Type

export const RawDiclVariant = Schema.Struct({
  type: Schema.String,
  weight: RawVariant.fields.weight,
  model: Schema.String,
  embedding_model: Schema.String,
  /** examples retrieved; 0 (as TensorZero allows) sends the input alone, with the instructions */
  k: NonNegativeInt,
  max_distance: Schema.optional(NonNegative),
  system_instructions: Schema.optional(Schema.String),
  ...modelCallFields
})
export type RawDiclVariant = typeof RawDiclVariant.Type

export const RawFunction = Schema.Struct({
  type: Schema.Literals(["chat", "json"]),
  description: Schema.optional(Schema.String),
  schemas: Schema.optional(Schema.Record(Schema.String, PathTable)),
  system_schema: Schema.optional(Schema.String),
  user_schema: Schema.optional(Schema.String),
  assistant_schema: Schema.optional(Schema.String),
  output_schema: Schema.optional(Schema.String),
  tools: Schema.optional(Schema.Array(Schema.String)),
  tool_choice: Schema.optional(RawToolChoice),
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  variants: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  /** decoded in `config/experimentation.ts` */
  experimentation: Schema.optional(Schema.Unknown),
  /** each decoded by its type's schema (`RawEvaluators`, built in `config/evaluators.ts`) */
  evaluators: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)))
})
export type RawFunction = typeof RawFunction.Type

const cutoff = Schema.optional(Schema.Finite)

/** A judge's variant: a chat_completion variant whose system prompt is `system_instructions`, a file read as is. */
export const RawJudgeVariant = Schema.Struct({
  /** checked apart, for a clear message: only chat_completion judges exist */
  type: Schema.optional(Schema.String),
  model: Schema.String,
  system_instructions: Schema.String,
  ...inferenceParamFields,
  json_mode: RawVariant.fields.json_mode,
  /** TensorZero's switch: true weighs 1, false 0 */
  active: Schema.optional(Schema.Boolean),
  weight: RawVariant.fields.weight,
  retries: RawVariant.fields.retries,
  timeouts: RawVariant.fields.timeouts,
  extra_body: RawVariant.fields.extra_body,
  extra_headers: RawVariant.fields.extra_headers
})
export type RawJudgeVariant = typeof RawJudgeVariant.Type

/** `[functions.<fn>.evaluators.<name>]` and `[evaluations.<e>.evaluators.<name>]`, by `type` */
export const RawEvaluators = {
  exact_match: Schema.Struct({ type: Schema.Literal("exact_match"), cutoff }),
  regex: Schema.Struct({
    type: Schema.Literal("regex"),
    must_match: Schema.optional(Schema.String),
    must_not_match: Schema.optional(Schema.String),
    cutoff
  }),
  tool_use: Schema.Struct({
    type: Schema.Literal("tool_use"),
    behavior: Schema.Literals(["none", "any", "none_of", "any_of", "all_of"]),
    tools: Schema.optional(Schema.Array(Schema.String)),
    cutoff
  }),
  llm_judge: Schema.Struct({
    type: Schema.Literal("llm_judge"),
    output_type: Schema.Literals(["boolean", "float"]),
    optimize: Schema.optional(Schema.Literals(["max", "min"])),
    include: Schema.optional(Schema.Struct({ reference_output: Schema.optional(Schema.Boolean) })),
    input_format: Schema.optional(Schema.Literals(["serialized", "messages"])),
    description: Schema.optional(Schema.String),
    cutoff,
    variants: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))
  })
}

/** `[evaluations.<name>]`: `static` is TensorZero's older name of `inference` */
export const RawEvaluation = Schema.Struct({
  type: Schema.Literals(["inference", "static"]),
  function_name: Schema.String,
  description: Schema.optional(Schema.String),
  evaluators: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))
})

export const RawTool = Schema.Struct({
  description: Schema.String,
  parameters: Schema.String,
  strict: Schema.optional(Schema.Boolean),
  name: Schema.optional(Schema.String)
})

export const RawMetric = Schema.Struct({
  type: Schema.Literals(["boolean", "float"]),
  description: Schema.optional(Schema.String),
  level: Schema.Literals(["inference", "episode"]),
  optimize: Schema.optional(Schema.Literals(["max", "min"]))
})

export const RawGateway = Schema.Struct({
  bind_address: Schema.optional(Schema.String),
  base_path: Schema.optional(Schema.String),
  debug: Schema.optional(Schema.Boolean),
  max_request_body_bytes: Schema.optional(PositiveInt),
  max_request_bytes_in_flight: Schema.optional(PositiveInt),
  max_connections: Schema.optional(PositiveInt),
  /** processes serving the port: a number, or "auto" for one per core (see layers/cluster) */
  workers: Schema.optional(Schema.Union([PositiveInt, Schema.Literal("auto")])),
  /** the `gateway-overhead-ms` response header on /inference and the OpenAI route */
  overhead_header: Schema.optional(Schema.Boolean),
  /** a surface's built-in tools (Anthropic's server tools) on a provider that cannot run them: dropped with a warning, or a 400 */
  unsupported_builtin_tools: Schema.optional(Schema.Literals(["drop", "refuse"])),
  /** a streamed answer that wrote nothing for this long writes a ping (the Anthropic surface's) */
  stream_keepalive_ms: Schema.optional(PositiveInt),
  metrics: Schema.optional(Schema.Struct({
    /** `GET /metrics` asks for an API key like the other routes (it is open by default, like /status) */
    require_auth: Schema.optional(Schema.Boolean)
  })),
  /** the web UI at `<base_path>/ui` (on by default) */
  ui: Schema.optional(Schema.Struct({
    enabled: Schema.optional(Schema.Boolean),
    /** how long a UI session lasts from sign-in, in seconds (absolute: using it does not extend it) */
    session_ttl_s: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxUiSessionTtlS }))),
    /** single sign-on with an OpenID Connect provider, checked by `config/uiOidc.ts` */
    oidc: Schema.optional(Schema.Struct({
      issuer_url: Schema.String,
      client_id: Schema.String,
      /** a credential location, as a provider's: `env::NAME`, `path::FILE`, `path_from_env::NAME` */
      client_secret_location: Schema.String,
      redirect_url: Schema.String,
      /** space-separated; `openid email profile` by default */
      scopes: Schema.optional(Schema.String),
      rules: Schema.optional(Schema.Array(Schema.Struct({
        claim: Schema.String,
        value: Schema.optional(Schema.String),
        email_domain: Schema.optional(Schema.String),
        workspace: Schema.String,
        role: Schema.Literals(["admin", "viewer"])
      })))
    }))
  })),
  request_read_timeout_ms: Schema.optional(PositiveInt),
  /** on SIGTERM, how long /health answers 503 `draining` while requests are still served, before the listener closes */
  drain_delay_ms: Schema.optional(NonNegativeInt),
  global_outbound_http_timeout_ms: Schema.optional(PositiveInt),
  max_provider_response_bytes: Schema.optional(PositiveInt),
  max_provider_stream_event_bytes: Schema.optional(PositiveInt),
  cache: Schema.optional(Schema.Struct({
    share_across_api_keys: Schema.optional(Schema.Boolean),
    lookup_timeout_ms: Schema.optional(PositiveInt),
    /** TensorZero's: where entries live (`auto`: the analytics database) */
    backend: Schema.optional(Schema.Literals(["auto", "clickhouse", "postgres", "valkey"])),
    valkey: Schema.optional(Schema.Struct({ ttl_s: Schema.optional(PositiveInt) }))
  })),
  batch: Schema.optional(Schema.Struct({
    /** seconds between background polls of a pending batch; 0: only clients' GETs poll */
    poll_interval_s: Schema.optional(NonNegativeInt)
  })),
  tasks: Schema.optional(Schema.Struct({
    /** seconds a durable task may be declined (configurations that cannot run it) before it fails, once every live gateway of its kind declined it */
    unrunnable_timeout_s: Schema.optional(PositiveInt)
  })),
  template_filesystem_access: Schema.optional(Schema.Union([
    Schema.Boolean,
    /** `base_path` alone enables access; `enabled` is TensorZero's deprecated switch */
    Schema.Struct({ enabled: Schema.optional(Schema.Boolean), base_path: Schema.optional(Schema.String) })
  ])),
  /** TensorZero's older spelling of `template_filesystem_access = true` (deprecated there) */
  enable_template_filesystem_access: Schema.optional(Schema.Boolean),
  disable_pseudonymous_usage_analytics: Schema.optional(Schema.Boolean),
  /** TensorZero's: error bodies also carry `error_json`, the error as a JSON value (its shape is unstable by name) */
  unstable_error_json: Schema.optional(Schema.Boolean),
  /** the `dummy::<model>` short-hands, which any caller can name (on by default: TensorZero's tests call them) */
  dummy_shorthands: Schema.optional(Schema.Boolean),
  observability: Schema.optional(Schema.Struct({
    enabled: Schema.optional(Schema.Boolean),
    disable_automatic_migrations: Schema.optional(Schema.Boolean),
    /** which database stores observability when both URLs could (see `analytics/analyticsDatabase.ts`) */
    backend: Schema.optional(Schema.Literals(["auto", "clickhouse", "postgres"])),
    /** TensorZero's: writes never delay an answer here, so it changes nothing */
    async_writes: Schema.optional(Schema.Boolean),
    batch_writes: Schema.optional(Schema.Struct({
      /** TensorZero's switch: writes are always batched here, so it changes nothing */
      enabled: Schema.optional(Schema.Boolean),
      max_rows: Schema.optional(PositiveInt),
      /** TensorZero's batch size for Postgres: `max_rows` applies to every database here */
      max_rows_postgres: Schema.optional(PositiveInt),
      max_bytes: Schema.optional(PositiveInt),
      flush_interval_ms: Schema.optional(PositiveInt)
    })),
    max_queued_writes: Schema.optional(PositiveInt),
    max_queued_bytes: Schema.optional(PositiveInt),
    /** the largest row stored (its JSON text): larger ones are cut down, raw payloads first */
    max_row_bytes: Schema.optional(PositiveInt),
    /** the write queue's durable log (layers/durableQueue/log.ts): off unless `path` is set */
    durable_queue: Schema.optional(Schema.Struct({
      path: Schema.optional(Schema.String),
      fsync: Schema.optional(Schema.Literals(["batch", "always", "never"])),
      fsync_interval_ms: Schema.optional(PositiveInt),
      max_bytes: Schema.optional(PositiveInt),
      segment_bytes: Schema.optional(PositiveInt),
      replay_interval_ms: Schema.optional(PositiveInt)
    }))
  })),
  /** the embedded database (`pglite://`): its free-space watch (layers/embedded/freeSpace.ts) */
  embedded_database: Schema.optional(Schema.Struct({
    /** writes pause below this many free bytes in the folder's filesystem; 0: never */
    min_free_bytes: Schema.optional(NonNegativeInt),
    free_space_check_interval_ms: Schema.optional(PositiveInt)
  })),
  export: Schema.optional(Schema.Struct({
    otlp: Schema.optional(Schema.Struct({
      traces: Schema.optional(Schema.Struct({
        enabled: Schema.optional(Schema.Boolean),
        extra_headers: Schema.optional(Schema.Record(Schema.String, Schema.String)),
        /** the share of requests traced, when the caller's `traceparent` does not decide */
        sample_ratio: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })))
      }))
    }))
  })),
  /** every model call goes to another gateway (`config/relay.ts`) */
  relay: Schema.optional(Schema.Struct({
    gateway_url: Schema.String,
    /** `env::NAME`, `dynamic::NAME` or `none`, checked by `config/relay.ts` */
    api_key_location: Schema.optional(Schema.String),
    forward_credentials: Schema.optional(Schema.Boolean)
  })),
  auth: Schema.optional(Schema.Struct({
    enabled: Schema.optional(Schema.Boolean),
    /** how long a verified key is trusted before asking the database again */
    cache_ttl_ms: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2000 }))),
    /** failed authentications one client address may make per minute (0: no limit) */
    max_failed_attempts_per_minute: Schema.optional(NonNegativeInt)
  }))
})

export type RawGateway = typeof RawGateway.Type

const PositiveFinite = Schema.Finite.check(Schema.isGreaterThan(0))

export const RawLimit = Schema.Union([
  PositiveFinite,
  Schema.Struct({ capacity: PositiveFinite, refill_rate: NonNegative })
]).annotate({ expected: "a number, or { capacity = <number>, refill_rate = <number> }" })

const limitFields = Object.fromEntries(
  ["model_inferences", "tokens", "cost"].flatMap((resource) =>
    ["second", "minute", "hour", "day", "week", "month"].map((period) => [`${resource}_per_${period}`, Schema.optional(RawLimit)])
  )
) as Record<`${"model_inferences" | "tokens" | "cost"}_per_${"second" | "minute" | "hour" | "day" | "week" | "month"}`, Schema.optional<typeof RawLimit>>

/** a rule has either `priority = N` or `always = true` (checked in `ratelimit/config.ts`) */
const RawScope = Schema.Array(
  Schema.Union([
    Schema.Struct({ api_key_public_id: Schema.String }),
    Schema.Struct({ workspace: Schema.String }),
    Schema.Struct({ tag_key: Schema.String, tag_value: Schema.String })
  ]).annotate({ expected: `{ api_key_public_id = "..." }, { workspace = "..." } or { tag_key = "...", tag_value = "..." }` })
)

export const RawRateLimitRule = Schema.Struct({
  priority: Schema.optional(Schema.Int),
  always: Schema.optional(Schema.Boolean),
  scope: Schema.optional(RawScope),
  ...limitFields
})

export const RawRateLimiting = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  /** the cost reserved before each call under a cost limit, and charged for a call that reports none */
  default_cost: Schema.optional(NonNegative),
  rules: Schema.optional(Schema.Array(Schema.Record(Schema.String, Schema.Unknown))),
  budgets: Schema.optional(Schema.Array(Schema.Record(Schema.String, Schema.Unknown)))
})

/** `[[rate_limiting.budgets]]`: a spend limit over a calendar period (src/budgets/budget.ts) */
export const RawBudget = Schema.Struct({
  scope: Schema.optional(RawScope),
  period: Schema.Literals(["day", "week", "month", "total"]).annotate({ expected: `"day", "week", "month" or "total"` }),
  limit: NonNegative
})

/** TensorZero's `[postgres]`: whether Postgres is used (this gateway decides by its URLs), and the pool size */
export const RawPostgres = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  connection_pool_size: Schema.optional(PositiveInt)
})

/** Sections are decoded one by one (by their builders), so a problem in one does not hide the others. */
export const RawConfig = Schema.Struct({
  gateway: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  models: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  functions: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  tools: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  metrics: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  rate_limiting: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  provider_types: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  embedding_models: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  evaluations: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  /** TensorZero's fine-tuning optimizers: loaded with a warning, not run (config/tensorzeroOnly.ts) */
  optimizers: Schema.optional(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  /** TensorZero's `[postgres]`: the pool size of this gateway's Postgres connections (config/postgres.ts) */
  postgres: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  /** where input files are written (config/objectStorage.ts) */
  object_storage: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
