/**
 * What the providers on Vertex AI (`gcp_vertex_gemini`, `gcp_vertex_anthropic`) share: their
 * settings (the model by `model_id`, a publisher model, or `endpoint_id`, a deployed endpoint,
 * in `project_id` and `location`; `api_base` in place of the location's host), the resource
 * names a model name may be (the short-hands' form), and the URLs made of them. Every part is
 * checked against its pattern (`../urls.ts`) before it goes into a URL: the location becomes
 * part of the host, and a short-hand's parts come from a request. How each type reads the rest
 * (what `api_base` holds, which settings win over the model name) is its own.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { quoted } from "../../untrusted.ts"
import {
  BaseUrl,
  endpointId,
  gcpLocation,
  gcpProject,
  httpsUrl,
  modelId,
  namedString,
  nameProblem,
  type UrlProblem,
  urlUnder
} from "../urls.ts"

export const VertexSettings = Schema.Struct({
  model_id: Schema.optional(namedString(modelId)),
  endpoint_id: Schema.optional(namedString(endpointId)),
  location: Schema.optional(namedString(gcpLocation)),
  project_id: Schema.optional(namedString(gcpProject)),
  api_base: Schema.optional(BaseUrl)
})
export type VertexSettings = typeof VertexSettings.Type

/** A Vertex model's address: its project and location, and a publisher model or a deployed endpoint. */
export interface VertexModel {
  readonly project: string
  readonly location: string
  readonly model?: string | undefined
  readonly endpoint?: string | undefined
}

/** The parts' problem, naming the setting each stands for (`project_id`, `location`, `model_id`, `endpoint_id`), or undefined. */
export const vertexModelProblem = (parts: {
  readonly project?: string | undefined
  readonly location?: string | undefined
  readonly model?: string | undefined
  readonly endpoint?: string | undefined
}): string | undefined =>
  (parts.project === undefined ? undefined : nameProblem("project_id", parts.project, gcpProject)) ??
    (parts.location === undefined ? undefined : nameProblem("location", parts.location, gcpLocation)) ??
    (parts.model === undefined ? undefined : nameProblem("model_id", parts.model, modelId)) ??
    (parts.endpoint === undefined ? undefined : nameProblem("endpoint_id", parts.endpoint, endpointId))

export const vertexResourceForms = (publisher: string) =>
  `projects/<project_id>/locations/<location>/publishers/${publisher}/models/<model_id> or projects/<project_id>/locations/<location>/endpoints/<endpoint_id>`

/**
 * A model name that is a Vertex resource name (TensorZero's short-hand forms):
 * `projects/<P>/locations/<L>/publishers/<publisher>/models/<M>` or
 * `projects/<P>/locations/<L>/endpoints/<E>`, read and checked. Undefined when the name does not
 * start with `projects/` (a plain model id); the problem when it does but is no such name, or a
 * part is malformed.
 */
export const parseVertexResourceName = (name: string, publisher: string): VertexModel | string | undefined => {
  if (!name.startsWith("projects/")) return undefined
  const parts = name.split("/")
  const located = parts[2] === "locations"
  const model: VertexModel | undefined =
    located && parts.length === 8 && parts[4] === "publishers" && parts[5] === publisher && parts[6] === "models"
      ? { project: parts[1], location: parts[3], model: parts[7] }
      : located && parts.length === 6 && parts[4] === "endpoints"
      ? { project: parts[1], location: parts[3], endpoint: parts[5] }
      : undefined
  if (model === undefined) return `${quoted(name, 200)} is not a Vertex AI resource name: expected ${vertexResourceForms(publisher)}`
  return vertexModelProblem(model) ?? model
}

/** The host of a location's Vertex AI API: the `global` location has no regional host. */
export const vertexHost = (location: string): string =>
  location === "global" ? "aiplatform.googleapis.com" : `${location}-aiplatform.googleapis.com`

/** `https://<the location's host><path>`, checked to be that host (the location checked before) */
export const vertexBaseOf = (location: string, path: string): Result.Result<string, UrlProblem> => httpsUrl(vertexHost(location), path)

/** `<base>projects/<P>/locations/<L>/publishers/<publisher>/models/<M>`, or `.../endpoints/<E>`, built and checked */
export const vertexResourceUrl = (base: string, model: VertexModel, publisher: string): Result.Result<string, UrlProblem> =>
  urlUnder(
    base,
    model.endpoint !== undefined
      ? ["projects", model.project, "locations", model.location, "endpoints", model.endpoint]
      : ["projects", model.project, "locations", model.location, "publishers", publisher, "models", model.model ?? ""]
  )
