/**
 * `azure`: Azure OpenAI's Chat Completions, a member of the Chat Completions family with its
 * own address (`{endpoint}/openai/deployments/{deployment_id}/chat/completions?api-version=`)
 * and its own key header (`api-key`). The deployment names the model, so `model_name` is not
 * required. Embeddings are served the same way (`.../embeddings`); batches by OpenAI's Batch
 * API at the resource's level (`{endpoint}/openai/files`, `.../batches`: `openai/batch.ts`).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { paramFieldsOf } from "../chatCompletionsFamily.ts"
import type { EmbeddingsHooks, WireCodec } from "../codec.ts"
import { chatCompletionsBody, type ChatCompletionsTarget } from "../openai/request.ts"
import { errorMessageOf, makeOpenAiChunkParser, parseOpenAiResponse } from "../openai/response.ts"
import { parseOpenAiEmbeddings } from "../openai/embeddings.ts"
import { type OpenAiBatchApi, openAiBatchHooks, type OpenAiBatchTarget } from "../openai/batch.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { BaseUrl, UrlProblem, urlUnder } from "../urls.ts"

/**
 * The latest generally available data-plane API version (Azure OpenAI's "API version
 * lifecycle" page): it takes `max_completion_tokens`, `stream_options` and `json_schema`.
 */
export const defaultAzureApiVersion = "2024-10-21"

const AzureSettings = Schema.Struct({
  endpoint: BaseUrl,
  deployment_id: Schema.String,
  api_version: Schema.optional(Schema.String)
})
type AzureSettings = typeof AzureSettings.Type

export interface AzureTarget extends ChatCompletionsTarget, OpenAiBatchTarget {
  readonly embeddingsUrl: string
  /** why no URL could be made of the settings (a deployment that is no path segment): every call fails with it */
  readonly problem?: string | undefined
}

/** `{endpoint}/openai/{segments}?api-version={version}`, built and checked (`../urls.ts`) */
const resourceUrl = (settings: AzureSettings, segments: ReadonlyArray<string>): Result.Result<string, UrlProblem> => {
  const endpoint = settings.endpoint.endsWith("/") ? settings.endpoint : `${settings.endpoint}/`
  return urlUnder(`${endpoint}openai/`, segments, `?api-version=${encodeURIComponent(settings.api_version ?? defaultAzureApiVersion)}`)
}

/** `{endpoint}/openai/deployments/{deployment_id}/{operation}?api-version={version}` */
const deploymentUrl = (settings: AzureSettings, ...operation: ReadonlyArray<string>): Result.Result<string, UrlProblem> =>
  resourceUrl(settings, ["deployments", encodeURIComponent(settings.deployment_id), ...operation])

/**
 * Azure's global batch (learn.microsoft.com/azure/ai-foundry/openai/how-to/batch): files and
 * batches belong to the resource, each line's `url` is `/chat/completions` and its `model` the
 * deployment, and a batch may use an upload only once Azure has processed it.
 */
const batchApi = (settings: AzureSettings): OpenAiBatchApi => ({
  url: (segments) => resourceUrl(settings, segments),
  endpoint: "/chat/completions",
  model: settings.deployment_id,
  awaitsProcessedFile: true
})

// as OpenAI: `max_completion_tokens`, which Azure's reasoning deployments require
const paramFields = paramFieldsOf({ max_tokens: "max_completion_tokens" })

const embeddings: EmbeddingsHooks<AzureTarget> = {
  url: (target) => target.embeddingsUrl,
  // the deployment names the model: no `model` field
  body: (_target, request) => ({
    input: request.input,
    ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
    encoding_format: "float"
  }),
  // the answer is OpenAI's
  parse: parseOpenAiEmbeddings
}

export const azureCodec: WireCodec<AzureSettings, AzureTarget, string> = {
  type: "azure",
  settings: AzureSettings,
  defaultCredential: {
    // the older name is read when the new one is unset, with a warning at start-up (config/models.ts)
    kind: "fallback",
    primary: { kind: "env", name: "AZURE_API_KEY" },
    fallback: { kind: "env", name: "AZURE_OPENAI_API_KEY" }
  },
  requiresModelName: false,
  target: (settings) => {
    const url = deploymentUrl(settings, "chat", "completions")
    const embeddingsUrl = deploymentUrl(settings, "embeddings")
    const problem = Result.isFailure(url) ? url.failure : Result.isFailure(embeddingsUrl) ? embeddingsUrl.failure : undefined
    return {
      url: Result.getOrElse(url, () => ""),
      embeddingsUrl: Result.getOrElse(embeddingsUrl, () => ""),
      problem: problem === undefined ? undefined : `deployment_id: ${problem.message}`,
      // Azure takes the model from the deployment and ignores this field
      model: settings.deployment_id,
      paramFields,
      paramDefaults: undefined,
      streamUsage: true,
      batchApi: batchApi(settings)
    }
  },
  targetProblem: (target) => target.problem,
  url: (target) => target.url,
  headers: (_target, apiKey) => {
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (apiKey !== undefined) headers["api-key"] = apiKey
    return headers
  },
  body: chatCompletionsBody,
  parseResponse: parseOpenAiResponse,
  framing: sse,
  streamParser: makeOpenAiChunkParser,
  errorMessage: errorMessageOf,
  embeddings,
  batch: openAiBatchHooks
}

export const azureProvider = wireProvider(azureCodec)
