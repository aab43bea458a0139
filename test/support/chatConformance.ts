/**
 * The conformance scenarios (`conformance.ts`) answered in a Chat Completions dialect: the
 * answers of Azure OpenAI and Mistral, whole or as `data:` chunks ending with `data: [DONE]`,
 * after checking that the request carries what the scenario needs. What differs between the
 * dialects (how a thought is answered and checked, the error body, cached tokens) is the
 * `ChatDialect` each fake gives.
 */
import { conformanceImage, conformanceToolResult, scenarioOf, toolResultAnswer } from "./conformance.ts"
import { jsonReply, sseReply, type WireReply, type WireRequest } from "./fakeWireServer.ts"

type Json = Record<string, any>

export interface ChatDialect {
  /** the error body of the provider, with `status` */
  readonly error: (status: number, message: string) => WireReply
  /** the message fields of an answer holding a thought then a text */
  readonly thoughtThenText: (thought: string, text: string) => Json
  /** the second turn of the thought round trip: what is missing of the thought sent back, if anything */
  readonly checkThoughtSentBack?: (body: Json) => string | undefined
  /** checks every request (Mistral's tool call ids); what is wrong, if anything */
  readonly checkRequest?: (body: Json) => string | undefined
  /** the usage fields for input, output and cached input tokens */
  readonly usage: (input: number, output: number, cached: number) => Json
}

export interface ChatAnswer {
  readonly message: Json
  readonly finishReason: string
  readonly usage: Json
}

export const chatCompletion = (answer: ChatAnswer): Json => ({
  id: "cmpl-fake",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "fake-model",
  choices: [{ index: 0, message: { role: "assistant", ...answer.message }, finish_reason: answer.finishReason }],
  usage: answer.usage
})

const chunkOf = (delta: Json, finishReason: string | null = null, usage?: Json): Json => ({
  id: "cmpl-fake",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "fake-model",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
  ...(usage === undefined ? {} : { usage })
})

/** The chunks of an answer: the role, the content in two pieces (or a list's chunks each), the tool calls, the finish with usage. */
export const chatChunks = (answer: ChatAnswer): ReadonlyArray<Json> => {
  const chunks: Array<Json> = [chunkOf({ role: "assistant", content: "" })]
  const content = answer.message.content
  if (typeof content === "string" && content !== "") {
    const cut = Math.max(1, Math.ceil(content.length / 2))
    for (const piece of [content.slice(0, cut), content.slice(cut)]) if (piece !== "") chunks.push(chunkOf({ content: piece }))
  } else if (Array.isArray(content)) {
    for (const part of content) chunks.push(chunkOf({ content: [part] }))
  }
  if (typeof answer.message.reasoning_content === "string") chunks.splice(1, 0, chunkOf({ reasoning_content: answer.message.reasoning_content }))
  const calls: ReadonlyArray<Json> = answer.message.tool_calls ?? []
  calls.forEach((call, index) => chunks.push(chunkOf({ tool_calls: [{ index, ...call }] })))
  chunks.push(chunkOf({}, answer.finishReason, answer.usage))
  return chunks
}

export const chatAnswer = (request: WireRequest, answer: ChatAnswer): WireReply =>
  request.body?.stream === true
    ? sseReply(chatChunks(answer).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n")
    : jsonReply(chatCompletion(answer))

const toolCall = (id: string, name: string, args: Json) => ({ id, type: "function", function: { name, arguments: JSON.stringify(args) } })

const offered = (body: Json, name: string): Json | undefined =>
  Array.isArray(body.tools) ? body.tools.find((tool: Json) => tool?.type === "function" && tool?.function?.name === name) : undefined

/** the `tool_result` turn in Chat Completions' form: the call call_1 on an assistant message and a `tool` message for it; what is missing, if anything */
export const chatToolResultLacking = (body: Json): string | undefined => {
  const messages: Array<Json> = Array.isArray(body?.messages) ? body.messages : []
  if (!messages.some((message) => message?.role === "assistant" && (message.tool_calls ?? []).some((call: Json) => call?.id === "call_1"))) {
    return "the tool call call_1 was not sent back"
  }
  const result = messages.find((message) => message?.role === "tool" && message.tool_call_id === "call_1")
  return result !== undefined && JSON.stringify(result.content).includes(conformanceToolResult) ? undefined : "the tool message of call_1 is missing"
}

/** The answer to a conformance request in `dialect`. */
export const chatConformance = (dialect: ChatDialect, request: WireRequest): WireReply => {
  const body: Json = request.body ?? {}
  const missing = (what: string) => dialect.error(400, `conformance: ${what}`)
  const problem = dialect.checkRequest?.(body)
  if (problem !== undefined) return missing(problem)
  const usage = dialect.usage(12, 7, 0)
  const text = (content: string, answerUsage = usage) => chatAnswer(request, { message: { content }, finishReason: "stop", usage: answerUsage })
  const scenario = scenarioOf(body)
  switch (scenario) {
    case undefined:
      return text("Hello from the fake")
    case "text":
    case "stream":
      return text("conformance text")
    case "usage":
      return text("conformance text", dialect.usage(11, 7, 3))
    case "tool_call":
    case "parallel_tool_calls":
    case "streamed_tool_calls": {
      if (offered(body, "get_weather")?.function?.parameters?.properties?.city === undefined) return missing("the function tool get_weather")
      if (body.tool_choice !== "auto") return missing(`tool_choice "auto", got ${JSON.stringify(body.tool_choice)}`)
      if (scenario === "streamed_tool_calls" && body.stream !== true) return missing("stream: true")
      const calls = [toolCall("call_1", "get_weather", { city: "Paris" })]
      if (scenario !== "tool_call") calls.push(toolCall("call_2", "get_weather", { city: "London" }))
      return chatAnswer(request, { message: { content: "", tool_calls: calls }, finishReason: "tool_calls", usage })
    }
    case "json_strict": {
      const format = body.response_format
      if (format?.type !== "json_schema" || format?.json_schema?.schema?.properties?.answer === undefined) {
        return missing("response_format of type json_schema with the output schema")
      }
      return text(JSON.stringify({ answer: "conformance" }))
    }
    case "json_tool": {
      if (offered(body, "respond") === undefined) return missing("the respond tool")
      if (body.tool_choice?.type !== "function" || body.tool_choice?.function?.name !== "respond") return missing("tool_choice forcing respond")
      return chatAnswer(request, {
        message: { content: "", tool_calls: [toolCall("call_1", "respond", { answer: "conformance" })] },
        finishReason: "tool_calls",
        usage
      })
    }
    case "image": {
      const url = `data:${conformanceImage.mimeType};base64,${conformanceImage.data}`
      const parts = (body.messages ?? []).flatMap((message: Json) => Array.isArray(message?.content) ? message.content : [])
      const found = parts.some((part: Json) =>
        part?.type === "image_url" && (part.image_url === url || part.image_url?.url === url)
      )
      return found ? text("image received") : missing("an image_url part with the PNG as a data URL")
    }
    case "thought_round_trip":
      return chatAnswer(request, { message: dialect.thoughtThenText("thinking", "first"), finishReason: "stop", usage })
    case "thought_round_trip_2": {
      const lacking = dialect.checkThoughtSentBack?.(body)
      return lacking === undefined ? text("second") : missing(lacking)
    }
    case "tool_result": {
      const lacking = chatToolResultLacking(body)
      return lacking === undefined ? text(toolResultAnswer) : missing(lacking)
    }
    case "error":
      return dialect.error(400, "conformance: prompt is too long")
  }
}
