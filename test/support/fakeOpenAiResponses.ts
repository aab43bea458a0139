/**
 * A local server that speaks the OpenAI Responses API (`POST /v1/responses`, Bearer key): it
 * answers the conformance scenarios (`conformance.ts`) as response objects, or, for a request
 * with `stream: true`, as the API's Server-Sent Events (`event: <type>` and `data: <json>` whose
 * `type` is the event's name), checking that each request carries what its scenario needs.
 */
import { conformanceImage, conformanceToolResult, scenarioOf, toolResultAnswer } from "./conformance.ts"
import { jsonReply, sseReply, startWireServer, type WireReply, type WireRequest, type WireServer } from "./fakeWireServer.ts"

export const responsesFakeKey = "sk-responses-fake"

type Json = Record<string, any>

export interface ResponsesUsage {
  readonly input: number
  readonly output: number
  readonly cached?: number
}

export const responsesError = (status: number, message: string, code: string | null = null): WireReply =>
  jsonReply({ error: { message, type: "invalid_request_error", param: null, code } }, status)

const missing = (what: string) => responsesError(400, `conformance: ${what}`)

export const messageItem = (text: string, id = "msg_1"): Json => ({
  type: "message",
  id,
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [] }]
})

export const functionCallItem = (callId: string, name: string, args: string, id = `fc_${callId}`): Json => ({
  type: "function_call",
  id,
  call_id: callId,
  name,
  arguments: args,
  status: "completed"
})

export const reasoningItem = (id: string, summary: string, encrypted?: string): Json => ({
  type: "reasoning",
  id,
  summary: [{ type: "summary_text", text: summary }],
  ...(encrypted === undefined ? {} : { encrypted_content: encrypted })
})

/** A whole response object holding `output`. */
export const responseObject = (
  output: ReadonlyArray<Json>,
  usage: ResponsesUsage = { input: 12, output: 7 },
  status: "completed" | "incomplete" = "completed",
  incompleteReason?: string
): Json => ({
  id: "resp_fake",
  object: "response",
  created_at: 1_700_000_000,
  status,
  error: null,
  incomplete_details: incompleteReason === undefined ? null : { reason: incompleteReason },
  model: "fake-model",
  output,
  parallel_tool_calls: true,
  store: false,
  usage: {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output
  }
})

const event = (type: string, payload: Json, sequence: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...payload })}\n\n`

/** The events the API streams for `response`: its items added, their deltas (texts in two pieces or more), done, completed. */
export const responseEvents = (response: Json): string => {
  let n = 0
  const out: Array<string> = []
  const inProgress = { ...response, status: "in_progress", output: [], usage: null }
  out.push(event("response.created", { response: inProgress }, n++))
  out.push(event("response.in_progress", { response: inProgress }, n++))
  response.output.forEach((item: Json, index: number) => {
    switch (item.type) {
      case "message": {
        out.push(event("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", content: [] } }, n++))
        item.content.forEach((part: Json, contentIndex: number) => {
          const at = { item_id: item.id, output_index: index, content_index: contentIndex }
          out.push(event("response.content_part.added", { ...at, part: { ...part, text: "" } }, n++))
          const text: string = part.text
          const cut = Math.max(1, Math.ceil(text.length / 2))
          for (const piece of [text.slice(0, cut), text.slice(cut)]) {
            if (piece !== "") out.push(event("response.output_text.delta", { ...at, delta: piece, logprobs: [] }, n++))
          }
          out.push(event("response.output_text.done", { ...at, text, logprobs: [] }, n++))
          out.push(event("response.content_part.done", { ...at, part }, n++))
        })
        break
      }
      case "function_call": {
        out.push(event("response.output_item.added", { output_index: index, item: { ...item, arguments: "", status: "in_progress" } }, n++))
        const args: string = item.arguments
        const cut = Math.ceil(args.length / 2)
        for (const piece of [args.slice(0, cut), args.slice(cut)]) {
          if (piece !== "") out.push(event("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: piece }, n++))
        }
        out.push(event("response.function_call_arguments.done", { item_id: item.id, output_index: index, arguments: args }, n++))
        break
      }
      case "reasoning": {
        out.push(event("response.output_item.added", { output_index: index, item: { ...item, summary: [] } }, n++))
        item.summary.forEach((part: Json, summaryIndex: number) => {
          const at = { item_id: item.id, output_index: index, summary_index: summaryIndex }
          out.push(event("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } }, n++))
          out.push(event("response.reasoning_summary_text.delta", { ...at, delta: part.text }, n++))
          out.push(event("response.reasoning_summary_text.done", { ...at, text: part.text }, n++))
          out.push(event("response.reasoning_summary_part.done", { ...at, part }, n++))
        })
        break
      }
      default:
        out.push(event("response.output_item.added", { output_index: index, item }, n++))
    }
    out.push(event("response.output_item.done", { output_index: index, item }, n++))
  })
  out.push(event(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response }, n++))
  return out.join("")
}

/** `response` whole, or streamed when the request asked for a stream. */
export const answer = (request: WireRequest, response: Json): WireReply =>
  request.body?.stream === true ? sseReply(responseEvents(response)) : jsonReply(response)

const textOf = (input: unknown): string => JSON.stringify(input ?? null)

const functionTool = (body: Json, name: string): Json | undefined =>
  Array.isArray(body.tools) ? body.tools.find((tool: Json) => tool?.type === "function" && tool?.name === name) : undefined

/** The conformance scenario of a request, answered in the Responses API's format. */
export const conformanceResponse = (request: WireRequest): WireReply => {
  const body: Json = request.body ?? {}
  const scenario = scenarioOf(body)
  switch (scenario) {
    case undefined:
      return answer(request, responseObject([messageItem("Hello from the fake Responses API")]))
    case "text":
    case "stream":
      return answer(request, responseObject([messageItem("conformance text")]))
    case "usage":
      return answer(request, responseObject([messageItem("conformance text")], { input: 11, output: 7, cached: 3 }))
    case "tool_call":
    case "parallel_tool_calls":
    case "streamed_tool_calls": {
      const tool = functionTool(body, "get_weather")
      if (tool === undefined || tool.parameters?.properties?.city === undefined) return missing("the function tool get_weather (flat, with its parameters)")
      if (body.tool_choice !== "auto") return missing(`tool_choice "auto", got ${JSON.stringify(body.tool_choice)}`)
      if (scenario === "streamed_tool_calls" && body.stream !== true) return missing("stream: true")
      const calls = [functionCallItem("call_1", "get_weather", JSON.stringify({ city: "Paris" }))]
      if (scenario !== "tool_call") calls.push(functionCallItem("call_2", "get_weather", JSON.stringify({ city: "London" })))
      return answer(request, responseObject(calls))
    }
    case "json_strict": {
      const format = body.text?.format
      if (format?.type !== "json_schema" || format?.strict !== true || format?.schema?.properties?.answer === undefined) {
        return missing("text.format of type json_schema, strict, with the output schema")
      }
      return answer(request, responseObject([messageItem(JSON.stringify({ answer: "conformance" }))]))
    }
    case "json_tool": {
      if (functionTool(body, "respond") === undefined) return missing("the respond tool")
      if (body.tool_choice?.type !== "function" || body.tool_choice?.name !== "respond") return missing("tool_choice forcing respond")
      return answer(request, responseObject([functionCallItem("call_1", "respond", JSON.stringify({ answer: "conformance" }))]))
    }
    case "image": {
      const images = (body.input ?? []).flatMap((item: Json) => Array.isArray(item?.content) ? item.content : [])
        .filter((part: Json) => part?.type === "input_image")
      if (!images.some((part: Json) => part.image_url === `data:${conformanceImage.mimeType};base64,${conformanceImage.data}`)) {
        return missing("an input_image with the PNG as a data URL")
      }
      return answer(request, responseObject([messageItem("image received")]))
    }
    case "thought_round_trip":
      if (!Array.isArray(body.include) || !body.include.includes("reasoning.encrypted_content")) {
        return missing(`include ["reasoning.encrypted_content"] (include_encrypted_reasoning = true)`)
      }
      // an encrypted content as OpenAI makes them (a Fernet token: `gAAAA...`)
      return answer(request, responseObject([reasoningItem("rs_conformance", "thinking", "gAAAAB-sig-conformance"), messageItem("first")]))
    case "thought_round_trip_2": {
      const reasoning = (body.input ?? []).find((item: Json) => item?.type === "reasoning")
      if (reasoning?.encrypted_content !== "gAAAAB-sig-conformance" || reasoning?.id !== undefined) {
        return missing(`the reasoning item sent back with its encrypted_content and no id (store is false), got ${textOf(reasoning)}`)
      }
      return answer(request, responseObject([messageItem("second")]))
    }
    case "tool_result": {
      const input: Array<Json> = Array.isArray(body.input) ? body.input : []
      if (!input.some((item) => item?.type === "function_call" && item.call_id === "call_1" && item.name === "get_weather")) {
        return missing("the function_call call_1 sent back")
      }
      const output = input.find((item) => item?.type === "function_call_output" && item.call_id === "call_1")
      if (output === undefined || !JSON.stringify(output.output).includes(conformanceToolResult)) return missing("the function_call_output of call_1")
      return answer(request, responseObject([messageItem(toolResultAnswer)]))
    }
    case "error":
      return responsesError(400, "conformance: prompt is too long", "context_length_exceeded")
  }
}

/** The Responses API fake: the key and the path checked, then `answerWith` (the conformance scenarios by default). */
export const startFakeOpenAiResponses = async (
  options: { readonly key?: string; readonly answerWith?: (request: WireRequest) => WireReply } = {}
): Promise<WireServer & { readonly apiBase: string }> => {
  const key = options.key ?? responsesFakeKey
  const answerWith = options.answerWith ?? conformanceResponse
  const server = await startWireServer((request) => {
    if (request.headers.authorization !== `Bearer ${key}`) {
      return responsesError(401, "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_api_key")
    }
    if (request.method !== "POST" || request.path !== "/v1/responses") return responsesError(404, `no route ${request.method} ${request.path}`)
    return answerWith(request)
  })
  return Object.assign(server, { apiBase: `${server.url}/v1/` })
}
