/**
 * The OpenAI Responses API as a codec (`POST {api_base}/responses`, Bearer key): chosen for a
 * provider of type `openai` by `api_type = "responses"`, or by the short-hand
 * `openai::responses::<model>` (`openai/index.ts`).
 */
import * as Schema from "effect/Schema"
import { BaseUrl } from "../../urls.ts"
import type { WireCodec } from "../../codec.ts"
import { bearerJsonHeaders } from "../../headers.ts"
import { sse } from "../../sse.ts"
import { openAiBatchApi, openAiBatchHooks, type OpenAiBatchTarget } from "../batch.ts"
import { responsesBody, type ResponsesTarget, responsesUrl } from "./request.ts"
import { parseResponsesResponse, responsesErrorMessage } from "./response.ts"
import { makeResponsesEventParser } from "./stream.ts"

export const openAiDefaultApiBase = "https://api.openai.com/v1/"

/** The settings of an `openai` provider table (both APIs: `api_type` chooses). */
export const OpenAiSettings = Schema.Struct({
  api_base: Schema.optional(BaseUrl),
  api_type: Schema.optional(Schema.Literals(["chat_completions", "responses"])),
  include_encrypted_reasoning: Schema.optional(Schema.Boolean)
})
export type OpenAiSettings = typeof OpenAiSettings.Type

export const responsesCodec: WireCodec<OpenAiSettings, ResponsesTarget & OpenAiBatchTarget, string> = {
  type: "openai",
  apiType: "responses",
  settings: OpenAiSettings,
  defaultCredential: { kind: "env", name: "OPENAI_API_KEY" },
  target: (settings, model) => ({
    url: responsesUrl(settings.api_base ?? openAiDefaultApiBase),
    model,
    includeEncryptedReasoning: settings.include_encrypted_reasoning ?? false,
    // the Batch API takes Responses API requests as they are, answered with Response objects
    batchApi: openAiBatchApi(settings.api_base ?? openAiDefaultApiBase, "/v1/responses")
  }),
  url: (target) => target.url,
  headers: bearerJsonHeaders,
  body: responsesBody,
  parseResponse: parseResponsesResponse,
  framing: sse,
  streamParser: makeResponsesEventParser,
  errorMessage: responsesErrorMessage,
  batch: openAiBatchHooks
}
