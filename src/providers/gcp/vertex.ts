/**
 * The settings of a provider on Vertex AI (`gcp_vertex_gemini`, `gcp_vertex_anthropic`): the
 * model by `model_id` (a publisher model) or `endpoint_id` (a deployed endpoint), in
 * `project_id` and `location`; `api_base` in place of the location's host. How each type reads
 * them (short-hand model names, the `global` location, what `api_base` holds) is its own.
 */
import * as Schema from "effect/Schema"

export const VertexSettings = Schema.Struct({
  model_id: Schema.optional(Schema.String),
  endpoint_id: Schema.optional(Schema.String),
  location: Schema.optional(Schema.String),
  project_id: Schema.optional(Schema.String),
  api_base: Schema.optional(Schema.String)
})
export type VertexSettings = typeof VertexSettings.Type
