/**
 * A local server that speaks Mistral's chat completions (`POST /v1/chat/completions`, Bearer
 * key): it refuses tool call ids that are not nine letters and digits (as Mistral does), and
 * answers the conformance scenarios with Mistral's answers: thoughts as `thinking` content
 * chunks, errors as `{"object": "error", "message": ...}`.
 */
import { type ChatDialect, chatConformance } from "./chatConformance.ts"
import { jsonReply, startWireServer, type WireReply, type WireRequest, type WireServer } from "./fakeWireServer.ts"

export const mistralFakeKey = "mistral-fake-key"

export const mistralError = (status: number, message: string, type = "invalid_request_error"): WireReply =>
  jsonReply({ object: "error", message, type, param: null, code: null }, status)

const idPattern = /^[a-zA-Z0-9]{9}$/

/** what is wrong with the tool call ids of the messages, if anything */
const checkToolCallIds = (body: any): string | undefined => {
  for (const message of body?.messages ?? []) {
    for (const call of message?.tool_calls ?? []) {
      if (!idPattern.test(String(call?.id))) return `Tool call id was ${call?.id} but must be a-z, A-Z, 0-9, with a length of 9.`
    }
    if (message?.role === "tool" && !idPattern.test(String(message?.tool_call_id))) {
      return `Tool call id was ${message?.tool_call_id} but must be a-z, A-Z, 0-9, with a length of 9.`
    }
  }
  return undefined
}

export const mistralDialect: ChatDialect = {
  error: (status, message) => mistralError(status, message),
  thoughtThenText: (thought, text) => ({
    content: [{ type: "thinking", thinking: [{ type: "text", text: thought }] }, { type: "text", text }]
  }),
  checkThoughtSentBack: (body) => {
    const assistant = (body?.messages ?? []).find((message: any) => message?.role === "assistant")
    const sentBack = Array.isArray(assistant?.content) &&
      assistant.content.some((part: any) => part?.type === "thinking" && part?.thinking?.[0]?.text === "thinking")
    return sentBack ? undefined : "the assistant's thinking chunk sent back"
  },
  checkRequest: (body) => {
    if (body?.stream_options !== undefined) return "stream_options is not a Mistral parameter"
    if (body?.seed !== undefined) return "seed is not a Mistral parameter (random_seed)"
    return checkToolCallIds(body)
  },
  usage: (input, output) => ({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output })
}

export const startFakeMistral = async (
  options: { readonly key?: string; readonly answerWith?: (request: WireRequest) => WireReply } = {}
): Promise<WireServer & { readonly apiBase: string }> => {
  const key = options.key ?? mistralFakeKey
  const answerWith = options.answerWith ?? ((request: WireRequest) => chatConformance(mistralDialect, request))
  const server = await startWireServer((request) => {
    if (request.headers.authorization !== `Bearer ${key}`) return mistralError(401, "Unauthorized", "unauthorized")
    if (request.method !== "POST" || request.path !== "/v1/chat/completions") return mistralError(404, "Not Found")
    return answerWith(request)
  })
  return Object.assign(server, { apiBase: `${server.url}/v1/` })
}
