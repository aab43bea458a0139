/**
 * The conformance fake of every server that speaks OpenAI's Chat Completions (`openai` and the
 * members of `src/providers/chatCompletionsMembers.ts`): `fakeOpenAi.ts` answering the
 * conformance scenarios (test/support/conformance.ts) in the Chat Completions wire format, with
 * what each type must send checked: its path, its key in `Authorization: Bearer` (or no
 * header), how it asks for structured output. A request that lacks what its scenario needs is
 * answered with OpenAI's error format, status 400, message "conformance: <what is missing>".
 */
import type { StructuredOutput } from "../../src/providers/openai/request.ts"
import { chatChunks, chatToolResultLacking } from "./chatConformance.ts"
import { type ConformanceSubject, conformanceImage, scenarioOf, toolResultAnswer } from "./conformance.ts"
import {
  completion,
  type FakeOpenAi,
  type ReceivedRequest,
  type Reply,
  startFakeOpenAi,
  textStreamChunks,
  toolCallStreamChunks
} from "./fakeOpenAi.ts"

/** What one type of the family must send. */
export interface ChatCompletionsExpectations {
  readonly type: string
  /** the path `api_base` ends with on the provider's own host (`/openai/v1/` for Groq), served by the fake too */
  readonly basePath: string
  /** the environment variable of its default credential; undefined: `api_key_location = "none"`, no header expected */
  readonly keyVariable: string | undefined
  /** how it asks for json_mode strict (the dialect's switch) */
  readonly structuredOutput: StructuredOutput
}

/** OpenAI's error body: `{"error": {"message", "type"}}`. */
export const openAiError = (status: number, message: string, type = "invalid_request_error"): Reply => ({
  kind: "json",
  status,
  body: { error: { message, type, param: null, code: null } }
})

const missing = (what: string) => openAiError(400, `conformance: ${what}`)

const toolCall = (id: string, name: string, args: unknown) => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) }
})

const functionTool = (body: any, name: string) =>
  Array.isArray(body?.tools) ? body.tools.find((tool: any) => tool?.type === "function" && tool.function?.name === name) : undefined

const offersWeather = (body: any): boolean => functionTool(body, "get_weather")?.function?.parameters?.properties?.city?.type === "string"

/** where the output schema arrived, per the type's way of asking for structured output */
const schemaArrived = (body: any, structured: StructuredOutput): boolean => {
  const format = body?.response_format
  switch (structured) {
    case "json_schema":
      return format?.type === "json_schema" && format.json_schema?.schema?.properties?.answer?.type === "string"
    case "json_object":
      return format?.type === "json_object"
    case "tgi":
      return format?.type === "json" && format.value?.properties?.answer?.type === "string"
  }
}

/** the user messages' image parts: `image_url` with a data URL */
const imageArrived = (body: any): boolean => {
  const url = `data:${conformanceImage.mimeType};base64,${conformanceImage.data}`
  return Array.isArray(body?.messages) && body.messages.some((message: any) =>
    message?.role === "user" && Array.isArray(message.content) &&
    message.content.some((part: any) => part?.type === "image_url" && part.image_url?.url === url)
  )
}

const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 3 } }

/**
 * A whole answer to a request that asked for a stream, as its chunks (a scenario whose answer
 * does not depend on streaming is answered either way); errors and streams as they are.
 */
const asAsked = (request: ReceivedRequest, reply: Reply): Reply => {
  if (request.body?.stream !== true || reply.kind !== "json" || (reply.status ?? 200) !== 200) return reply
  const whole = reply.body as ReturnType<typeof completion>
  const [choice] = whole.choices
  return { kind: "stream", chunks: chatChunks({ message: choice.message, finishReason: choice.finish_reason, usage: whole.usage }) }
}

/** The answer of one conformance request, whole or streamed as the request asks. */
export const conformanceReply = (request: ReceivedRequest, expected: ChatCompletionsExpectations): Reply =>
  asAsked(request, scenarioReply(request, expected))

const scenarioReply = (request: ReceivedRequest, expected: ChatCompletionsExpectations): Reply => {
  const body = request.body
  if (request.method !== "POST" || request.path !== `${expected.basePath}chat/completions`) {
    return openAiError(404, `conformance: ${request.method} ${request.path} is not ${expected.basePath}chat/completions`, "not_found")
  }
  const key = expected.keyVariable === undefined ? undefined : `key-for-${expected.type}`
  const authorization = request.headers.authorization
  if (key === undefined ? authorization !== undefined : authorization !== `Bearer ${key}`) {
    return openAiError(401, "Incorrect API key provided", "authentication_error")
  }
  const scenario = scenarioOf(body)
  switch (scenario) {
    case undefined:
      return missing("no scenario marker in the request")
    case "text":
      return { kind: "json", body: completion({ content: "conformance text" }) }
    case "stream":
      if (body.stream !== true) return missing("stream: true")
      if (body.stream_options?.include_usage !== true) return missing("stream_options.include_usage")
      return { kind: "stream", chunks: textStreamChunks(["conformance", " text"], { prompt_tokens: 11, completion_tokens: 7 }) }
    case "tool_call":
      if (!offersWeather(body)) return missing("the tool get_weather")
      if (body.tool_choice !== undefined && body.tool_choice !== "auto") return missing("tool_choice auto")
      return {
        kind: "json",
        body: completion({ content: null, tool_calls: [toolCall("call_1", "get_weather", { city: "Paris" })] }, { finishReason: "tool_calls" })
      }
    case "streamed_tool_calls":
      if (!offersWeather(body)) return missing("the tool get_weather")
      if (body.stream !== true) return missing("stream: true")
      return {
        kind: "stream",
        chunks: toolCallStreamChunks([toolCall("call_1", "get_weather", { city: "Paris" }), toolCall("call_2", "get_weather", { city: "London" })])
      }
    case "parallel_tool_calls":
      if (!offersWeather(body)) return missing("the tool get_weather")
      return {
        kind: "json",
        body: completion({
          content: null,
          tool_calls: [toolCall("call_1", "get_weather", { city: "Paris" }), toolCall("call_2", "get_weather", { city: "London" })]
        }, { finishReason: "tool_calls" })
      }
    case "json_strict":
      if (!schemaArrived(body, expected.structuredOutput)) return missing(`the output schema as ${expected.structuredOutput}`)
      return { kind: "json", body: completion({ content: "{\"answer\":\"conformance\"}" }) }
    case "json_tool": {
      const respond = functionTool(body, "respond")
      if (respond?.function?.parameters?.properties?.answer?.type !== "string") return missing("the respond tool with the schema")
      if (body.tool_choice?.function?.name !== "respond") return missing("tool_choice forcing respond")
      return {
        kind: "json",
        body: completion({ content: null, tool_calls: [toolCall("call_1", "respond", { answer: "conformance" })] }, {
          finishReason: "tool_calls"
        })
      }
    }
    case "image":
      if (!imageArrived(body)) return missing("the image as an image_url data URL")
      return { kind: "json", body: completion({ content: "image received" }) }
    case "thought_round_trip":
      return { kind: "json", body: completion({ reasoning_content: "thinking", content: "first" }) }
    case "thought_round_trip_2":
      // Chat Completions has no way to send reasoning back, and DeepSeek refuses it (400)
      if (body.messages.some((message: any) => message?.reasoning_content !== undefined)) {
        return missing("no reasoning_content sent back")
      }
      return { kind: "json", body: completion({ content: "second" }) }
    case "tool_result": {
      const lacking = chatToolResultLacking(body)
      return lacking === undefined ? { kind: "json", body: completion({ content: toolResultAnswer }) } : missing(lacking)
    }
    case "error":
      return openAiError(400, "conformance: prompt is too long")
    case "usage":
      return { kind: "json", body: { ...completion({ content: "conformance text" }), usage } }
  }
}

/** Starts the fake for one type of the family, answering the conformance scenarios. */
export const startChatCompletionsFake = async (expected: ChatCompletionsExpectations): Promise<FakeOpenAi> => {
  const fake = await startFakeOpenAi()
  fake.fallback = (request) => conformanceReply(request, expected)
  return fake
}

/** The conformance subject of one type of the family. */
export const chatCompletionsSubject = (
  expected: ChatCompletionsExpectations,
  extraTable: Readonly<Record<string, string | number | boolean>> = {}
): ConformanceSubject => ({
  type: expected.type,
  start: async () => {
    const fake = await startChatCompletionsFake(expected)
    return {
      providerTable: {
        type: expected.type,
        model_name: `${expected.type}-conformance-model`,
        api_base: `${fake.url}${expected.basePath}`,
        ...(expected.keyVariable === undefined ? { api_key_location: "none" } : {}),
        ...extraTable
      },
      env: expected.keyVariable === undefined ? {} : { [expected.keyVariable]: `key-for-${expected.type}` },
      received: () => fake.requests.map((request) => request.body),
      close: () => fake.close()
    }
  }
})
