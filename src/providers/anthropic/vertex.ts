/**
 * `gcp_vertex_anthropic`: Anthropic's Messages body on Vertex AI
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude): POSTed to the
 * model's `:rawPredict` (`:streamRawPredict` for streams), without `model` (the URL names it)
 * and with `anthropic_version: "vertex-2023-10-16"`; authorized by an OAuth2 access token of a
 * service account (`gcp/serviceAccount.ts`).
 *
 * The model: `model_id` (a publisher model) or `endpoint_id` (a deployed endpoint), with
 * `project_id` and `location`; or, for the short-hand
 * `gcp_vertex_anthropic::projects/<P>/locations/<L>/publishers/anthropic/models/<M>`, that path
 * as the model name. `api_base` replaces `https://<location>-aiplatform.googleapis.com/`.
 */
import type { WireCodec } from "../codec.ts"
import { makeServiceAccountAuthorizer } from "../gcp/serviceAccount.ts"
import { VertexSettings } from "../gcp/vertex.ts"
import { wireProvider } from "../runner.ts"
import { sse } from "../sse.ts"
import { anthropicBody, type AnthropicTarget } from "./request.ts"
import { anthropicErrorMessage, makeAnthropicChunkParser, parseAnthropicResponse } from "./response.ts"

export const vertexAnthropicVersion = "vertex-2023-10-16"
const type = "gcp_vertex_anthropic"

const modelPath = /^projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/]+)$/

/** The resource the calls go to (`projects/.../models/<M>` or `.../endpoints/<E>`) and its location, or why there is none. */
const resourceOf = (settings: VertexSettings, model: string): { readonly path: string; readonly location: string } | string => {
  const { model_id, endpoint_id, location, project_id } = settings
  if (model_id !== undefined || endpoint_id !== undefined) {
    if (model_id !== undefined && endpoint_id !== undefined) return `a ${type} provider takes model_id or endpoint_id, not both`
    if (location === undefined || project_id === undefined) return `a ${type} provider with model_id or endpoint_id needs location and project_id`
    const name = model_id !== undefined ? `publishers/anthropic/models/${model_id}` : `endpoints/${endpoint_id}`
    return { path: `projects/${project_id}/locations/${location}/${name}`, location }
  }
  const match = modelPath.exec(model)
  if (match !== null) return { path: model, location: match[2] }
  return `a ${type} provider needs model_id (or endpoint_id), location and project_id, or a model name of the form projects/<project>/locations/<location>/publishers/anthropic/models/<model>`
}

const vertexTarget = (settings: VertexSettings, model: string): AnthropicTarget => {
  const resource = resourceOf(settings, model)
  if (typeof resource === "string") return { type, url: "", streamUrl: "", model: undefined, bodyVersion: vertexAnthropicVersion, problem: resource }
  // the `global` location has no regional host
  const base = settings.api_base ??
    (resource.location === "global" ? "https://aiplatform.googleapis.com/" : `https://${resource.location}-aiplatform.googleapis.com/`)
  const modelUrl = new URL(`v1/${resource.path}`, base.endsWith("/") ? base : `${base}/`).toString()
  return { type, url: `${modelUrl}:rawPredict`, streamUrl: `${modelUrl}:streamRawPredict`, model: undefined, bodyVersion: vertexAnthropicVersion }
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
  errorMessage: anthropicErrorMessage
}

export const vertexAnthropicProvider = wireProvider(vertexAnthropicCodec)
