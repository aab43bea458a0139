/**
 * The provider-neutral shapes the inference path works with: a rendered request for one
 * model call, and what a provider answers (whole or as chunks). Providers translate
 * between these and their wire formats.
 */
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import type { InferenceParams, JsonMode } from "./params.ts"

export type Role = "user" | "assistant"

export type FileSource =
  | { readonly kind: "url"; readonly url: string; readonly mimeType?: string | undefined }
  | { readonly kind: "base64"; readonly data: string; readonly mimeType: string }

export type ImageDetail = "low" | "high" | "auto"

/** Anthropic's prompt-caching mark (`{"type": "ephemeral"}`), sent by the providers that honour it */
export type CacheControl = Readonly<Record<string, unknown>>

/** A content block of a rendered message, as sent to a provider. */
export type RequestBlock =
  | { readonly type: "text"; readonly text: string; readonly cache_control?: CacheControl | undefined }
  | {
    readonly type: "tool_call"
    readonly id: string
    readonly name: string
    /** JSON text of the arguments */
    readonly arguments: string
    readonly cache_control?: CacheControl | undefined
  }
  | {
    readonly type: "tool_result"
    readonly id: string
    readonly name: string
    readonly result: string
    /** the tool failed: providers that can say so (Anthropic, Bedrock) do */
    readonly is_error?: boolean | undefined
    readonly cache_control?: CacheControl | undefined
  }
  | {
    readonly type: "file"
    readonly source: FileSource
    readonly detail?: ImageDetail | undefined
    readonly cache_control?: CacheControl | undefined
  }
  | {
    readonly type: "thought"
    readonly text?: string | undefined
    readonly signature?: string | undefined
    /** the type of the provider that made it: its signature goes only to providers of the same signature family */
    readonly providerType?: string | undefined
  }
  | {
    readonly type: "unknown"
    readonly data: unknown
    readonly modelProviderName?: string | undefined
    /** the type of the provider that made it (a client's redacted thinking): sent only to providers of its family */
    readonly providerType?: string | undefined
  }

export interface RequestMessage {
  readonly role: Role
  readonly content: ReadonlyArray<RequestBlock>
}

/** Sampling and decoding parameters of one model call (spec 4.1 `params.chat_completion`). */
/** A tool as offered to a model. */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly parameters: Record<string, unknown>
  readonly strict: boolean
  readonly validator: JsonSchemaValidator
  /**
   * An OpenAI custom tool: the model answers free text (optionally shaped by a grammar)
   * instead of JSON arguments; `parameters` is then empty.
   */
  readonly custom?: { readonly format?: unknown } | undefined
  readonly cacheControl?: CacheControl | undefined
}

export type ToolChoice =
  | { readonly type: "none" }
  | { readonly type: "auto" }
  | { readonly type: "required" }
  | { readonly type: "specific"; readonly name: string }

/** The tools of one model call. `allowed` restricts which of `tools` the model may call. */
export interface ToolConfig {
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly allowed?: ReadonlyArray<string> | undefined
  readonly choice: ToolChoice
  readonly parallelToolCalls?: boolean | undefined
}

/** A provider-native tool passed through unchanged (spec 4.1 `provider_tools`). */
export interface ProviderTool {
  readonly modelName?: string | undefined
  readonly providerName?: string | undefined
  /**
   * a surface's built-in tool (Anthropic's web search, say): sent only to providers of this
   * family (src/providers/families.ts); elsewhere dropped, or with `refuseElsewhere` the call
   * fails as one the provider cannot make (a fallback of the family may still take it)
   */
  readonly family?: string | undefined
  readonly refuseElsewhere?: boolean | undefined
  /** how the client named the tool, for the warning or the refusal */
  readonly label?: string | undefined
  readonly tool: unknown
}

/** One rendered model call, independent of the provider that will serve it. */
export interface ModelRequest {
  readonly system?: string | undefined
  /** the system prompt's prompt-caching mark */
  readonly systemCacheControl?: CacheControl | undefined
  readonly messages: ReadonlyArray<RequestMessage>
  readonly params: InferenceParams
  readonly tools?: ToolConfig | undefined
  readonly functionType: "chat" | "json"
  readonly jsonMode: JsonMode
  readonly outputSchema?: Record<string, unknown> | undefined
  readonly providerTools: ReadonlyArray<ProviderTool>
}

export type FinishReason = "stop" | "stop_sequence" | "length" | "tool_call" | "content_filter" | "unknown"

export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
  /** of `input_tokens`, those the provider read from its prompt cache, when it says */
  readonly cached_input_tokens?: number | undefined
  /** of `input_tokens`, those the provider wrote to its prompt cache, when it says some were (Anthropic, Bedrock) */
  readonly cache_write_input_tokens?: number | undefined
}

/** A content block as a provider returned it, before the function validates it. */
export type OutputBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_call"; readonly id: string; readonly raw_name: string; readonly raw_arguments: string }
  | {
    readonly type: "thought"
    readonly text: string
    readonly signature?: string | undefined
    /** the type of the provider that made it: whose signature it carries (src/providers/families.ts) */
    readonly provider_type?: string | undefined
  }
  | { readonly type: "unknown"; readonly data: unknown; readonly model_provider_name: string }

/** What a provider answered to a non-streaming call. */
/**
 * The provider's own stop reason and the stop sequence it matched, where its API says more than
 * `FinishReason` (Anthropic's `pause_turn`, `refusal`): what a surface of that API answers with.
 */
export interface ProviderStop {
  readonly reason: string
  readonly sequence?: string | undefined
}

export interface ProviderResponse {
  readonly output: ReadonlyArray<OutputBlock>
  readonly usage: Usage
  readonly finishReason?: FinishReason | undefined
  readonly providerStop?: ProviderStop | undefined
  readonly rawRequest: string
  readonly rawResponse: string
  /** served from the gateway's cache */
  readonly cached?: boolean | undefined
  /** what the call cost by the provider's `cost` rules (`inference/cost.ts`): undefined when it has none or they read nothing */
  readonly cost?: number | undefined
}

/** A piece of a streamed answer: content deltas, then usage and a finish reason at the end. */
export interface ProviderChunk {
  readonly content: ReadonlyArray<ChunkDelta>
  readonly usage?: Usage | undefined
  readonly finishReason?: FinishReason | undefined
  readonly providerStop?: ProviderStop | undefined
  /** the provider's own text of this chunk, kept for storage */
  readonly raw: string
}

export type ChunkDelta =
  | { readonly type: "text"; readonly id: string; readonly text: string }
  | { readonly type: "tool_call"; readonly id: string; readonly raw_name: string; readonly raw_arguments: string }
  | { readonly type: "thought"; readonly id: string; readonly text: string; readonly signature?: string | undefined }

/** A variant or provider that failed before another answered (traces show them). */
export interface FailedAttempt<F extends { readonly message: string }> {
  readonly name: string
  readonly failure: F
  /** epoch milliseconds */
  readonly atMs: number
}
