/**
 * The request and answer Schemas of batch inference (spec 4.4): `POST /batch_inference` submits many
 * inputs of one function to its variant's provider's batch API; the batch, and each of its
 * inferences, are read back with `GET /batch_inference/{batch_id}[/inference/{inference_id}]`
 * (pending, failed, or completed with the inferences as `/inference` answers them).
 */
import * as Schema from "effect/Schema"
import { RawToolChoice } from "../inference/params.ts"
import { AdditionalTool, ContentBlock, Input, JsonOutput, Usage } from "./inference.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
/** a list with one entry per input; null (or a missing list) means the default for that input */
const perInput = <S extends Schema.Top>(entry: S, description: string) =>
  Schema.optional(Schema.Array(Schema.NullOr(entry))).annotate({ description: `${description}; one entry per input (null: the default)` })

/** the most inputs one batch takes (the providers' own limits are lower for some: Anthropic 100,000, OpenAI 50,000) */
export const maxBatchInputs = 50_000

/** the most inferences one page of a completed batch answers (`limit`) */
export const maxBatchPage = 1000

const batchFields = {
  function_name: Schema.String,
  inputs: Schema.Array(Input).annotate({ description: `the inputs, as /inference's \`input\` (1 to ${maxBatchInputs})` }),
  variant_name: Schema.optional(Schema.String).annotate({ description: "pins the variant; default: one sampled by weight for the whole batch" }),
  episode_ids: perInput(Schema.String, "the episode of each inference (a UUIDv7 the gateway issued)"),
  additional_tools: perInput(Schema.Array(AdditionalTool), "tools offered besides the function's"),
  allowed_tools: perInput(Schema.Array(Schema.String), "the tools each inference may use"),
  tool_choice: perInput(RawToolChoice, "as /inference's `tool_choice`"),
  parallel_tool_calls: perInput(Schema.Boolean, "as /inference's `parallel_tool_calls`"),
  output_schemas: perInput(JsonObject, "json functions: the schema each output is checked against"),
  params: Schema.optional(Schema.Struct({
    chat_completion: Schema.optional(Schema.Record(Schema.String, Schema.Array(Schema.Unknown)))
  })).annotate({ description: "`{chat_completion: {<param>: [value or null per input]}}`, parameters as /inference's `params`" }),
  tags: perInput(Schema.Record(Schema.String, Schema.String), "tags of each inference"),
  credentials: Schema.optional(Schema.Record(Schema.String, Schema.String)).annotate({
    description: "dynamic credentials for the submission (a batch is polled in the background, with the provider's configured credential)"
  }),
  // asked for, refused with a 400 that says why (a batch has none of these)
  stream: Schema.optional(Schema.Unknown),
  dryrun: Schema.optional(Schema.Unknown),
  cache_options: Schema.optional(Schema.Unknown)
}

export const BatchInferenceRequest = Schema.Struct(batchFields).annotate({ identifier: "BatchInferenceRequest" })
export type BatchInferenceRequest = typeof BatchInferenceRequest.Type

/**
 * The same body with its inputs left undecoded: up to 50,000 inputs are decoded one slice at a
 * time with `Input` (layers/http/batch.ts), rather than in one pass that would hold the event loop.
 */
export const BatchInferenceEnvelope = Schema.Struct({ ...batchFields, inputs: Schema.Array(Schema.Unknown) })

export const BatchInferenceResponse = Schema.Struct({
  batch_id: Schema.String,
  inference_ids: Schema.Array(Schema.String).annotate({ description: "in input order" }),
  episode_ids: Schema.Array(Schema.String).annotate({ description: "in input order" })
}).annotate({ identifier: "BatchInferenceResponse" })

const head = { inference_id: Schema.String, episode_id: Schema.String, variant_name: Schema.String }
const tail = { usage: Usage, finish_reason: Schema.optional(Schema.String) }

/** One inference of a completed batch: as /inference answers it, or the provider's error for it. */
export const BatchInference = Schema.Union([
  Schema.Struct({ ...head, content: Schema.Array(ContentBlock), ...tail }),
  Schema.Struct({ ...head, output: JsonOutput, ...tail }),
  Schema.Struct({ ...head, error: Schema.String.annotate({ description: "the provider gave no answer for this input: why" }) })
]).annotate({ identifier: "BatchInference" })

export const BatchStatusResponse = Schema.Union([
  Schema.Struct({ status: Schema.Literal("pending") }),
  Schema.Struct({ status: Schema.Literal("failed"), error: Schema.optional(Schema.String) }),
  Schema.Struct({
    status: Schema.Literal("completed"),
    batch_id: Schema.String,
    inferences: Schema.Array(BatchInference).annotate({ description: "in input order: all of them, or the page asked (`limit`, `after`)" }),
    next_after: Schema.optional(Schema.NullOr(Schema.String)).annotate({
      description: "with `limit` only: the `after` of the next page (the last inference id of this one), null on the last page"
    })
  })
]).annotate({ identifier: "BatchStatus" })
