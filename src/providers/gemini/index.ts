/**
 * The Gemini provider types, one codec (`request.ts`, `response.ts`) at two addresses:
 * - `google_ai_studio_gemini`: the Gemini API, `x-goog-api-key`;
 * - `gcp_vertex_gemini`: Vertex AI, an OAuth2 access token of a service account
 *   (`../gcp/serviceAccount.ts`), the model named by settings or by its resource name.
 */
import * as Schema from "effect/Schema"
import type { WireCodec } from "../codec.ts"
import { makeServiceAccountAuthorizer } from "../gcp/serviceAccount.ts"
import { VertexSettings } from "../gcp/vertex.ts"
import { wireProvider } from "../runner.ts"
import { sse } from "../sse.ts"
import { geminiBody, type GeminiTarget, geminiUrl } from "./request.ts"
import { geminiErrorMessage, makeGeminiChunkParser, parseGeminiResponse } from "./response.ts"

const withSlash = (base: string) => (base.endsWith("/") ? base : `${base}/`)

const jsonHeaders = () => ({ "content-type": "application/json" })

const aiStudioSettings = Schema.Struct({ api_base: Schema.optional(Schema.String) })

const aiStudioFileUri = /^https:\/\/generativelanguage\.googleapis\.com\/v1beta\/files\//

export const aiStudioCodec: WireCodec<typeof aiStudioSettings.Type, GeminiTarget, string> = {
  type: "google_ai_studio_gemini",
  settings: aiStudioSettings,
  defaultCredential: { kind: "env", name: "GOOGLE_AI_STUDIO_API_KEY" },
  target: (settings, model) => ({
    type: "google_ai_studio_gemini",
    modelUrl: `${withSlash(settings.api_base ?? "https://generativelanguage.googleapis.com/v1beta/")}models/${model}`,
    takesFileUri: (url) => aiStudioFileUri.test(url)
  }),
  url: geminiUrl,
  headers: (_target, apiKey) => apiKey === undefined ? jsonHeaders() : { ...jsonHeaders(), "x-goog-api-key": apiKey },
  body: geminiBody,
  parseResponse: parseGeminiResponse,
  framing: sse,
  streamParser: makeGeminiChunkParser,
  errorMessage: geminiErrorMessage
}

const resourceName = /^projects\/([^/]+)\/locations\/([^/]+)\/(?:publishers\/google\/models\/([^/]+)|endpoints\/([^/]+))$/

/**
 * The model's URL from the settings, completed by a model name that is a resource name
 * (`projects/<P>/locations/<L>/publishers/google/models/<M>` or `.../endpoints/<E>`, the
 * short-hand's form) or a plain model id.
 */
export const vertexModelUrl = (settings: VertexSettings, model: string): string | { readonly problem: string } => {
  const named = resourceName.exec(model)
  const projectId = settings.project_id ?? named?.[1]
  const location = settings.location ?? named?.[2]
  const endpointId = settings.endpoint_id ?? (settings.model_id === undefined ? named?.[4] : undefined)
  const modelId = settings.model_id ?? (endpointId === undefined ? named?.[3] ?? (named === null && model !== "" ? model : undefined) : undefined)
  const missing = [
    projectId === undefined ? "project_id" : undefined,
    location === undefined ? "location" : undefined,
    modelId === undefined && endpointId === undefined ? "model_id or endpoint_id" : undefined
  ].filter((name) => name !== undefined)
  if (missing.length > 0) {
    return {
      problem: `the gcp_vertex_gemini provider lacks ${
        missing.join(", ")
      }: set them, or name the model projects/<project_id>/locations/<location>/publishers/google/models/<model_id>`
    }
  }
  // the global location has no regional host
  const host = location === "global" ? "https://aiplatform.googleapis.com/v1/" : `https://${location}-aiplatform.googleapis.com/v1/`
  const resource = endpointId !== undefined
    ? `projects/${projectId}/locations/${location}/endpoints/${endpointId}`
    : `projects/${projectId}/locations/${location}/publishers/google/models/${modelId}`
  return `${withSlash(settings.api_base ?? host)}${resource}`
}

const vertexFileUri = /^(gs|https?):\/\//

export const vertexCodec: WireCodec<VertexSettings, GeminiTarget, string> = {
  type: "gcp_vertex_gemini",
  settings: VertexSettings,
  defaultCredential: { kind: "path_from_env", name: "GCP_VERTEX_CREDENTIALS_PATH" },
  requiresModelName: false,
  target: (settings, model) => {
    const url = vertexModelUrl(settings, model)
    return typeof url === "string"
      ? { type: "gcp_vertex_gemini", modelUrl: url, takesFileUri: (uri) => vertexFileUri.test(uri) }
      : { type: "gcp_vertex_gemini", modelUrl: "", takesFileUri: () => false, problem: url.problem }
  },
  targetProblem: (target) => target.problem,
  url: geminiUrl,
  headers: jsonHeaders,
  authorizer: () => makeServiceAccountAuthorizer(),
  body: geminiBody,
  parseResponse: parseGeminiResponse,
  framing: sse,
  streamParser: makeGeminiChunkParser,
  errorMessage: geminiErrorMessage
}

export const aiStudioGeminiProvider = wireProvider(aiStudioCodec)
export const vertexGeminiProvider = wireProvider(vertexCodec)
