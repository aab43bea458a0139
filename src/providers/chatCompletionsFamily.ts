/**
 * The Chat Completions family: the providers whose servers speak OpenAI's Chat Completions wire
 * format (OpenAI itself; vLLM, SGLang, TGI, Groq, Together, Fireworks, DeepSeek, xAI, Mistral,
 * OpenRouter...). Each is declared, not coded: its `api_base`, its key, how it names the
 * inference parameters, and a few switches; the body, response and stream parsing are OpenAI's
 * (`openai/`), the transport the runner's.
 *
 * Named for the wire format it speaks rather than "OpenAI-compatible", which in this code base
 * is the gateway's own inbound OpenAI surface (`src/openaiCompatible/`): the two go opposite ways.
 */
import * as Schema from "effect/Schema"
import type { CredentialLocation } from "../config/credentials.ts"
import { type InferenceParams, inferenceParamNames } from "../inference/params.ts"
import type { SettingsSchema, WireCodec } from "./codec.ts"
import {
  chatCompletionsBody,
  type ChatCompletionsTarget,
  chatCompletionsUrl,
  type ParamField,
  type StructuredOutput
} from "./openai/request.ts"
import { errorMessageOf, makeOpenAiChunkParser, parseOpenAiResponse } from "./openai/response.ts"
import { embeddingsUrl, openAiEmbeddingsHooks } from "./openai/embeddings.ts"
import { sse } from "./sse.ts"
import { BaseUrl } from "./urls.ts"

/** The field a parameter is sent as; `null`: the server does not take it, and it is not sent. */
export type ParamRule = string | null

/** How the family names the parameters, unless a member says otherwise: their own names but `stop`, no thinking budget, no `top_k` (OpenAI's API has none). */
export const familyParams: Readonly<Record<keyof InferenceParams, ParamRule>> = {
  temperature: "temperature",
  max_tokens: "max_tokens",
  seed: "seed",
  top_p: "top_p",
  top_k: null,
  presence_penalty: "presence_penalty",
  frequency_penalty: "frequency_penalty",
  stop_sequences: "stop",
  reasoning_effort: "reasoning_effort",
  service_tier: "service_tier",
  thinking_budget_tokens: null,
  verbosity: "verbosity"
}

/** The fields a server takes, in body order: `familyParams` with its own renames (and `null`s) over them. */
export const paramFieldsOf = (params?: Partial<Record<keyof InferenceParams, ParamRule>>): ReadonlyArray<ParamField> => {
  const rules = params === undefined ? familyParams : { ...familyParams, ...params }
  const fields: Array<ParamField> = []
  for (const name of inferenceParamNames) {
    const field = rules[name]
    if (field !== null && field !== undefined) fields.push([name, field])
  }
  return fields
}

/** One member of the family. */
export interface ChatCompletionsDialect {
  /** the provider type (`type = "..."`, `<type>::<model>`) */
  readonly type: string
  readonly defaultCredential: CredentialLocation
  /** where its names differ from `familyParams` (renames, and `null` for what it does not take) */
  readonly params?: Partial<Record<keyof InferenceParams, ParamRule>> | undefined
  /** values sent for parameters the request leaves unset */
  readonly defaults?: Partial<InferenceParams> | undefined
  /** asks for usage in the last streamed chunk (`stream_options`), which some servers refuse; default true */
  readonly streamUsage?: boolean | undefined
  /** the header that carries the key and what precedes it; default `authorization: Bearer <key>` */
  readonly auth?: { readonly header: string; readonly prefix: string } | undefined
  /** headers sent with every call (an attribution header, an API version) */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** how it takes json_mode `strict` (`StructuredOutput`); default OpenAI's `json_schema` */
  readonly structuredOutput?: StructuredOutput | undefined
  /** the `model` sent when the provider table names none (a server that serves one model); without it `model_name` is required */
  readonly defaultModel?: string | undefined
}

const optionalApiBase = Schema.Struct({ api_base: Schema.optional(BaseUrl) })
const requiredApiBase = Schema.Struct({ api_base: BaseUrl })

/** A member served at a known address: `api_base` may point it elsewhere (a proxy, a test server). */
export const hostedCodec = (dialect: ChatCompletionsDialect & { readonly defaultApiBase: string }) =>
  familyCodec(dialect, optionalApiBase, (settings) => settings.api_base ?? dialect.defaultApiBase)

/** A member the user runs themselves (vLLM, SGLang, TGI): `api_base` is required. */
export const selfHostedCodec = (dialect: ChatCompletionsDialect) =>
  familyCodec(dialect, requiredApiBase, (settings) => settings.api_base)

/** A member's target: its Chat Completions target, and where it serves embeddings. */
export type FamilyTarget = ChatCompletionsTarget & { readonly embeddingsUrl: string }

/** The codec of one member, its parameter map compiled once; every member has OpenAI's embeddings (`openai/embeddings.ts`). */
const familyCodec = <Settings>(
  dialect: ChatCompletionsDialect,
  settings: SettingsSchema<Settings>,
  apiBaseOf: (settings: Settings) => string
): WireCodec<Settings, FamilyTarget, string> => {
  const paramFields = paramFieldsOf(dialect.params)
  const streamUsage = dialect.streamUsage ?? true
  const structuredOutput = dialect.structuredOutput ?? "json_schema"
  const { header, prefix } = dialect.auth ?? { header: "authorization", prefix: "Bearer " }
  const fixedHeaders = { "content-type": "application/json", ...dialect.headers }
  return {
    type: dialect.type,
    settings,
    defaultCredential: dialect.defaultCredential,
    requiresModelName: dialect.defaultModel === undefined,
    target: (settings, model) => ({
      providerType: dialect.type,
      url: chatCompletionsUrl(apiBaseOf(settings)),
      embeddingsUrl: embeddingsUrl(apiBaseOf(settings)),
      model: model === "" && dialect.defaultModel !== undefined ? dialect.defaultModel : model,
      paramFields,
      paramDefaults: dialect.defaults,
      streamUsage,
      structuredOutput
    }),
    url: (target) => target.url,
    headers: (_target, apiKey) => {
      const headers: Record<string, string> = { ...fixedHeaders }
      if (apiKey !== undefined) headers[header] = `${prefix}${apiKey}`
      return headers
    },
    body: chatCompletionsBody,
    parseResponse: parseOpenAiResponse,
    framing: sse,
    streamParser: makeOpenAiChunkParser,
    errorMessage: errorMessageOf,
    embeddings: openAiEmbeddingsHooks
  }
}
