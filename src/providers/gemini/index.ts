/**
 * The Gemini provider types, one codec (`request.ts`, `response.ts`) at two addresses:
 * - `google_ai_studio_gemini`: the Gemini API, `x-goog-api-key`;
 * - `gcp_vertex_gemini`: Vertex AI, an OAuth2 access token of a service account
 *   (`../gcp/serviceAccount.ts`), the model named by settings or by its resource name.
 * Both run batches: inline on the Gemini API (`aiStudioBatch.ts`), through Cloud Storage on
 * Vertex AI (`vertexBatch.ts`, its `batch` setting).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { WireCodec } from "../codec.ts"
import { defaultStorageApiBase, parseGsUri } from "../gcp/cloudStorage.ts"
import { makeServiceAccountAuthorizer } from "../gcp/serviceAccount.ts"
import { parseVertexResourceName, vertexBaseOf, vertexModelProblem, vertexResourceForms, vertexResourceUrl, VertexSettings } from "../gcp/vertex.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { BaseUrl, modelId, nameProblem, UrlProblem, urlUnder } from "../urls.ts"
import { aiStudioBatch } from "./aiStudioBatch.ts"
import { geminiBody, geminiUrl } from "./request.ts"
import { type GeminiTarget } from "./target.ts"
import { geminiErrorMessage, makeGeminiChunkParser, parseGeminiResponse } from "./response.ts"
import { noBatchSettings, vertexBatch, VertexBatchSettings } from "./vertexBatch.ts"
import { type VertexBatchTarget } from "./target.ts"

const withSlash = (base: string) => (base.endsWith("/") ? base : `${base}/`)

const jsonHeaders = () => ({ "content-type": "application/json" })

const aiStudioSettings = Schema.Struct({ api_base: Schema.optional(BaseUrl) })

const aiStudioFileUri = /^https:\/\/generativelanguage\.googleapis\.com\/v1beta\/files\//

const aiStudioType = "google_ai_studio_gemini"

export const aiStudioCodec: WireCodec<typeof aiStudioSettings.Type, GeminiTarget, string> = {
  type: aiStudioType,
  settings: aiStudioSettings,
  defaultCredential: { kind: "env", name: "GOOGLE_AI_STUDIO_API_KEY" },
  target: (settings, model) => {
    const apiBase = withSlash(settings.api_base ?? "https://generativelanguage.googleapis.com/v1beta/")
    // the model is a path segment (`models/<model>`): a short-hand's comes from a request
    const malformed = nameProblem("model_name", model, modelId)
    const modelUrl = malformed === undefined ? urlUnder(apiBase, ["models", model]) : Result.fail(new UrlProblem(malformed))
    if (Result.isFailure(modelUrl)) return { type: aiStudioType, modelUrl: "", takesFileUri: () => false, problem: modelUrl.failure.message }
    return {
      type: aiStudioType,
      modelUrl: modelUrl.success,
      takesFileUri: (url) => aiStudioFileUri.test(url),
      batch: { api: "ai_studio", apiBase }
    }
  },
  targetProblem: (target) => target.problem,
  url: geminiUrl,
  headers: (_target, apiKey) => apiKey === undefined ? jsonHeaders() : { ...jsonHeaders(), "x-goog-api-key": apiKey },
  body: geminiBody,
  parseResponse: parseGeminiResponse,
  framing: sse,
  streamParser: makeGeminiChunkParser,
  errorMessage: geminiErrorMessage,
  batch: aiStudioBatch
}

/** A Vertex model's address, read from the settings and the model name, every part checked. */
interface VertexResource {
  /** `api_base`, or the location's host, with `/v1/` */
  readonly base: string
  readonly projectId: string
  readonly location: string
  readonly modelId: string | undefined
  readonly endpointId: string | undefined
  /** the model's URL, before `:generateContent` */
  readonly modelUrl: string
}

/**
 * The model's address from the settings, completed by a model name that is a resource name
 * (`projects/<P>/locations/<L>/publishers/google/models/<M>` or `.../endpoints/<E>`, the
 * short-hand's form) or a plain model id. A malformed part is named, and no URL is made of it.
 */
const vertexResource = (settings: VertexSettings, model: string): VertexResource | { readonly problem: string } => {
  const named = parseVertexResourceName(model, "google")
  if (typeof named === "string") return { problem: named }
  const projectId = settings.project_id ?? named?.project
  const location = settings.location ?? named?.location
  const endpointId = settings.endpoint_id ?? (settings.model_id === undefined ? named?.endpoint : undefined)
  const modelId = settings.model_id ?? (endpointId === undefined ? named?.model ?? (named === undefined && model !== "" ? model : undefined) : undefined)
  if (projectId === undefined || location === undefined || (modelId === undefined && endpointId === undefined)) {
    const missing = [
      projectId === undefined ? "project_id" : undefined,
      location === undefined ? "location" : undefined,
      modelId === undefined && endpointId === undefined ? "model_id or endpoint_id" : undefined
    ].filter((name) => name !== undefined)
    return {
      problem: `the gcp_vertex_gemini provider lacks ${missing.join(", ")}: set them, or name the model ${vertexResourceForms("google")}`
    }
  }
  const parts = { project: projectId, location, model: endpointId === undefined ? modelId : undefined, endpoint: endpointId }
  const malformed = vertexModelProblem(parts)
  if (malformed !== undefined) return { problem: malformed }
  const baseUrl = settings.api_base === undefined ? vertexBaseOf(location, "/v1/") : Result.succeed(withSlash(settings.api_base))
  if (Result.isFailure(baseUrl)) return { problem: baseUrl.failure.message }
  const base = baseUrl.success
  const modelUrl = vertexResourceUrl(base, parts, "google")
  if (Result.isFailure(modelUrl)) return { problem: modelUrl.failure.message }
  return { base, projectId, location, modelId, endpointId, modelUrl: modelUrl.success }
}

/** The model's URL (see `vertexResource`), before `:generateContent`. */
export const vertexModelUrl = (settings: VertexSettings, model: string): string | { readonly problem: string } => {
  const resource = vertexResource(settings, model)
  return "problem" in resource ? resource : resource.modelUrl
}

/** Where a Vertex provider's batches go, or why it can make none (no storage settings, a deployed endpoint). */
const vertexBatchTarget = (resource: VertexResource, settings: VertexGeminiSettings): VertexBatchTarget => {
  if (settings.batch === undefined) return { api: "vertex", problem: noBatchSettings }
  if (resource.modelId === undefined) {
    return { api: "vertex", problem: "the gcp_vertex_gemini provider names a deployed endpoint (endpoint_id): its batches need a publisher model (model_id)" }
  }
  const jobsUrl = urlUnder(resource.base, ["projects", resource.projectId, "locations", resource.location, "batchPredictionJobs"])
  if (Result.isFailure(jobsUrl)) return { api: "vertex", problem: jobsUrl.failure.message }
  return {
    api: "vertex",
    jobsUrl: jobsUrl.success,
    apiBase: resource.base,
    model: `publishers/google/models/${resource.modelId}`,
    // the settings' Schema checked both are gs:// locations
    input: parseGsUri(settings.batch.input_uri_prefix)!,
    outputUriPrefix: settings.batch.output_uri_prefix,
    storageApiBase: settings.batch.storage_api_base ?? defaultStorageApiBase
  }
}

const VertexGeminiSettings = Schema.Struct({ ...VertexSettings.fields, batch: Schema.optional(VertexBatchSettings) })
type VertexGeminiSettings = typeof VertexGeminiSettings.Type

const vertexFileUri = /^(gs|https?):\/\//

export const vertexCodec: WireCodec<VertexGeminiSettings, GeminiTarget, string> = {
  type: "gcp_vertex_gemini",
  settings: VertexGeminiSettings,
  defaultCredential: { kind: "path_from_env", name: "GCP_VERTEX_CREDENTIALS_PATH" },
  requiresModelName: false,
  target: (settings, model) => {
    const resource = vertexResource(settings, model)
    return "problem" in resource
      ? { type: "gcp_vertex_gemini", modelUrl: "", takesFileUri: () => false, problem: resource.problem }
      : {
        type: "gcp_vertex_gemini",
        modelUrl: resource.modelUrl,
        takesFileUri: (uri) => vertexFileUri.test(uri),
        batch: vertexBatchTarget(resource, settings)
      }
  },
  targetProblem: (target) => target.problem,
  url: geminiUrl,
  headers: jsonHeaders,
  authorizer: () => makeServiceAccountAuthorizer(),
  body: geminiBody,
  parseResponse: parseGeminiResponse,
  framing: sse,
  streamParser: makeGeminiChunkParser,
  errorMessage: geminiErrorMessage,
  batch: vertexBatch
}

export const aiStudioGeminiProvider = wireProvider(aiStudioCodec)
export const vertexGeminiProvider = wireProvider(vertexCodec)
