/**
 * The gateway's own fields on the OpenAI-style surfaces (`gateway::episode_id`,
 * `gateway::tags`, ...): the Schema fields every such request body carries beside its
 * surface's own, and what they set on the gateway's inference request. One place, so that the
 * chat route and the surfaces of issue 37 read them alike.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { InvalidRequest } from "../errors.ts"
import { CacheOptions, ExtraBodyRequestEdit, ExtraHeaderRequestEdit, type InferenceRequest } from "./inference.ts"
import { checkClientTags, namespaceTag } from "./tags.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** the Schema fields of the gateway's own options, for a surface's request Struct */
export const gatewayRequestFields = {
  "gateway::variant_name": Schema.optional(Schema.String),
  "gateway::episode_id": Schema.optional(Schema.String),
  "gateway::dryrun": Schema.optional(Schema.Boolean),
  "gateway::tags": Schema.optional(Schema.Record(Schema.String, Schema.String)),
  "gateway::namespace": Schema.optional(Schema.String),
  "gateway::cache_options": Schema.optional(CacheOptions),
  "gateway::credentials": Schema.optional(Schema.Record(Schema.String, Schema.String)),
  "gateway::extra_body": Schema.optional(Schema.Array(ExtraBodyRequestEdit)),
  "gateway::extra_headers": Schema.optional(Schema.Array(ExtraHeaderRequestEdit)),
  "gateway::provider_tools": Schema.optional(Schema.Array(Schema.Struct({
    scope: Schema.optional(Schema.Struct({
      model_name: Schema.optional(Schema.String),
      provider_name: Schema.optional(Schema.String)
    })),
    tool: JsonObject
  })))
}

const GatewayRequestFields = Schema.Struct(gatewayRequestFields)
export type GatewayRequestFields = typeof GatewayRequestFields.Type

/** what the gateway's fields set on the inference request (the variant aside: the surface reconciles it with `model`) */
export type GatewayRequestPart = Pick<
  InferenceRequest,
  "episode_id" | "dryrun" | "tags" | "cache_options" | "credentials" | "extra_body" | "extra_headers" | "provider_tools"
>

/** The gateway's fields of `body` as inference request fields; a 400 for tags the gateway reserves. */
export const gatewayRequestPart = (body: GatewayRequestFields): Result.Result<GatewayRequestPart, InvalidRequest> => {
  const reserved = checkClientTags(body["gateway::tags"], "gateway::tags")
  if (reserved !== undefined) return Result.fail(reserved)
  const tags = { ...body["gateway::tags"] }
  if (body["gateway::namespace"] !== undefined) tags[namespaceTag] = body["gateway::namespace"]
  return Result.succeed({
    episode_id: body["gateway::episode_id"],
    dryrun: body["gateway::dryrun"],
    tags,
    cache_options: body["gateway::cache_options"],
    credentials: body["gateway::credentials"],
    extra_body: body["gateway::extra_body"],
    extra_headers: body["gateway::extra_headers"],
    provider_tools: body["gateway::provider_tools"]?.map((entry) => ({
      scope: entry.scope === undefined ? undefined : { model_name: entry.scope.model_name, model_provider_name: entry.scope.provider_name },
      tool: entry.tool
    }))
  })
}
