/**
 * `gcp_vertex_anthropic`: Anthropic's Messages body on Vertex AI
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude): POSTed to the
 * model's `:rawPredict` (`:streamRawPredict` for streams), without `model` (the URL names it)
 * and with `anthropic_version: "vertex-2023-10-16"`; authorized by an OAuth2 access token of a
 * service account (`gcp/serviceAccount.ts`). Token counts go to the location's
 * `count-tokens:rawPredict`, the model in the body (`countTokens.ts`).
 *
 * The model: `model_id` (a publisher model) or `endpoint_id` (a deployed endpoint), with
 * `project_id` and `location`; or, for the short-hand
 * `gcp_vertex_anthropic::projects/<P>/locations/<L>/publishers/anthropic/models/<M>` (or
 * `.../endpoints/<E>`), that path as the model name, every part checked (`../gcp/vertex.ts`).
 * `api_base` replaces `https://<location>-aiplatform.googleapis.com/`.
 */
import * as Result from "effect/Result"
import type { WireCodec } from "../codec.ts"
import { makeServiceAccountAuthorizer } from "../gcp/serviceAccount.ts"
import {
  parseVertexResourceName,
  vertexBaseOf,
  type VertexModel,
  vertexModelProblem,
  vertexResourceForms,
  vertexResourceUrl,
  VertexSettings
} from "../gcp/vertex.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { anthropicCountTokens } from "./countTokens.ts"
import { anthropicBody, type AnthropicTarget } from "./request.ts"
import { anthropicErrorMessage, makeAnthropicChunkParser, parseAnthropicResponse } from "./response.ts"

export const vertexAnthropicVersion = "vertex-2023-10-16"
const type = "gcp_vertex_anthropic"

/** The model the calls go to, every part checked, or why there is none. */
const modelOf = (settings: VertexSettings, model: string): VertexModel | string => {
  const { model_id, endpoint_id, location, project_id } = settings
  if (model_id !== undefined || endpoint_id !== undefined) {
    if (model_id !== undefined && endpoint_id !== undefined) return `a ${type} provider takes model_id or endpoint_id, not both`
    if (location === undefined || project_id === undefined) return `a ${type} provider with model_id or endpoint_id needs location and project_id`
    const parts = { project: project_id, location, model: model_id, endpoint: endpoint_id }
    return vertexModelProblem(parts) ?? parts
  }
  return parseVertexResourceName(model, "anthropic") ??
    `a ${type} provider needs model_id (or endpoint_id), location and project_id, or a model name of the form ${vertexResourceForms("anthropic")}`
}

const failed = (problem: string): AnthropicTarget => ({ type, url: "", streamUrl: "", model: undefined, bodyVersion: vertexAnthropicVersion, problem })

const vertexTarget = (settings: VertexSettings, model: string): AnthropicTarget => {
  const parts = modelOf(settings, model)
  if (typeof parts === "string") return failed(parts)
  // `api_base` replaces the location's host; the path starts with `v1/`
  const hostUrl = settings.api_base === undefined ? vertexBaseOf(parts.location, "/") : Result.succeed(settings.api_base)
  if (Result.isFailure(hostUrl)) return failed(hostUrl.failure.message)
  const host = hostUrl.success
  const base = `${host.endsWith("/") ? host : `${host}/`}v1/`
  const resourceUrl = vertexResourceUrl(base, parts, "anthropic")
  if (Result.isFailure(resourceUrl)) return failed(resourceUrl.failure.message)
  const modelUrl = resourceUrl.success
  return {
    type,
    url: `${modelUrl}:rawPredict`,
    streamUrl: `${modelUrl}:streamRawPredict`,
    model: undefined,
    bodyVersion: vertexAnthropicVersion,
    count: countOf(base, parts)
  }
}

/** a publisher model's tokens are counted by its location's `count-tokens` model, the model named in the body; an endpoint's are not */
const countOf = (base: string, parts: VertexModel): AnthropicTarget["count"] => {
  if (parts.model === undefined) return undefined
  const url = vertexResourceUrl(base, { ...parts, model: "count-tokens" }, "anthropic")
  return Result.isFailure(url) ? undefined : { url: `${url.success}:rawPredict`, model: parts.model }
}

export const vertexAnthropicCodec: WireCodec<VertexSettings, AnthropicTarget, string> = {
  type,
  settings: VertexSettings,
  defaultCredential: { kind: "path_from_env", name: "GCP_VERTEX_CREDENTIALS_PATH" },
  requiresModelName: false,
  target: vertexTarget,
  targetProblem: (target) => target.problem,
  url: (target, stream) => (stream ? target.streamUrl : target.url),
  headers: () => ({ "content-type": "application/json" }),
  authorizer: () => makeServiceAccountAuthorizer(),
  body: anthropicBody,
  parseResponse: parseAnthropicResponse,
  framing: sse,
  streamParser: makeAnthropicChunkParser,
  errorMessage: anthropicErrorMessage,
  countTokens: anthropicCountTokens
}

export const vertexAnthropicProvider = wireProvider(vertexAnthropicCodec)
