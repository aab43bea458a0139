/**
 * The request and answer Schemas of `POST /openai/v1/embeddings`: OpenAI's request and answer
 * (https://platform.openai.com/docs/api-reference/embeddings/create) plus the gateway's own
 * `gateway::*` fields. Other fields are ignored, as OpenAI clients send them.
 */
import * as Schema from "effect/Schema"
import { CacheOptions } from "./inference.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** how a request's `model` names a configured embedding model: `gateway::embedding_model_name::<name>` */
export const embeddingModelPrefix = "gateway::embedding_model_name::"

/** at most this many texts per request, as OpenAI */
export const maxEmbeddingInputs = 2048

export const EmbeddingsRequest = Schema.Struct({
  input: Schema.Union([
    Schema.String,
    Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(maxEmbeddingInputs))
  ]).annotate({
    description: "a text or a list of texts (token arrays are not accepted: send text)",
    expected: `a string or a non-empty list of at most ${maxEmbeddingInputs} strings`
  }),
  model: Schema.String.annotate({
    description: "`gateway::embedding_model_name::<name>`, or a short-hand `<provider_type>::<model>` (`openai::text-embedding-3-small`)"
  }),
  dimensions: Schema.optional(PositiveInt),
  encoding_format: Schema.optional(Schema.Literals(["float", "base64"])),
  user: Schema.optional(Schema.String).annotate({ description: "ignored" }),
  "gateway::credentials": Schema.optional(Schema.Record(Schema.String, Schema.String)),
  "gateway::dryrun": Schema.optional(Schema.Boolean),
  "gateway::cache_options": Schema.optional(CacheOptions),
  "gateway::include_raw_response": Schema.optional(Schema.Boolean)
}).annotate({ identifier: "EmbeddingsRequest" })
export type EmbeddingsRequest = typeof EmbeddingsRequest.Type

export const EmbeddingsResponse = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({
    object: Schema.Literal("embedding"),
    index: Count,
    embedding: Schema.Union([Schema.Array(Schema.Finite), Schema.String]).annotate({
      description: "floats, or with `encoding_format: \"base64\"` their little-endian float32 bytes in base64"
    })
  })),
  model: Schema.String,
  usage: Schema.Struct({ prompt_tokens: Count, total_tokens: Count }),
  gateway_raw_response: Schema.optional(Schema.Array(Schema.Struct({
    model_inference_id: Schema.String,
    provider_type: Schema.String,
    data: Schema.String
  }))).annotate({ description: "with `gateway::include_raw_response`: the provider's answer" })
}).annotate({ identifier: "EmbeddingsResponse" })
