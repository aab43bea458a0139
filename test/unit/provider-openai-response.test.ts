import { describe, expect, it } from "vitest"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { WireProblem } from "../../src/providers/codec.ts"
import { errorMessageOf, finishReasonOf, makeOpenAiChunkParser, parseOpenAiResponse, usageOf } from "../../src/providers/openai/response.ts"

/** what the codec explains, for a problem; the value itself otherwise */
const explained = <A>(value: A | WireProblem): A | string => value instanceof WireProblem ? value.message : value

// Bodies as api.openai.com sends them (ids shortened).
const textResponse = {
  id: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  object: "chat.completion",
  created: 1741569952,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "Hello! How can I help you today?", refusal: null, annotations: [] },
    logprobs: null,
    finish_reason: "stop"
  }],
  usage: {
    prompt_tokens: 19,
    completion_tokens: 10,
    total_tokens: 29,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
  },
  service_tier: "default",
  system_fingerprint: "fp_06737a9306"
}

const toolResponse = {
  id: "chatcmpl-abc123",
  object: "chat.completion",
  created: 1699896916,
  model: "gpt-4o-mini",
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_abc123", type: "function", function: { name: "get_current_weather", arguments: "{\n\"location\": \"Boston, MA\"\n}" } },
        { id: "call_def456", type: "function", function: { name: "get_current_weather", arguments: "{\"location\": \"Paris\"}" } }
      ],
      refusal: null
    },
    logprobs: null,
    finish_reason: "tool_calls"
  }],
  usage: { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 }
}

describe("parseOpenAiResponse", () => {
  it("reads the text, usage and finish reason of a chat completion", () => {
    expect(explained(parseOpenAiResponse(JSON.stringify(textResponse)))).toEqual({
      output: [{ type: "text", text: "Hello! How can I help you today?" }],
      usage: { input_tokens: 19, output_tokens: 10, cached_input_tokens: 0 },
      finishReason: "stop"
    })
  })

  it("reports prompt-cache reads as cached_input_tokens: OpenAI's prompt_tokens_details.cached_tokens, DeepSeek's prompt_cache_hit_tokens", () => {
    const withUsage = (usage: object) => explained(parseOpenAiResponse(JSON.stringify({ ...textResponse, usage })))
    expect(withUsage({ prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } })).toMatchObject({
      usage: { input_tokens: 11, output_tokens: 7, cached_input_tokens: 3 }
    })
    expect(withUsage({ prompt_tokens: 11, completion_tokens: 7, prompt_cache_hit_tokens: 4, prompt_cache_miss_tokens: 7 }))
      .toMatchObject({ usage: { input_tokens: 11, output_tokens: 7, cached_input_tokens: 4 } })
    // a server that does not say has no cached count (not 0)
    expect(withUsage({ prompt_tokens: 11, completion_tokens: 7 })).toMatchObject({ usage: { input_tokens: 11, output_tokens: 7 } })
    expect((withUsage({ prompt_tokens: 11, completion_tokens: 7 }) as any).usage).not.toHaveProperty("cached_input_tokens")
  })

  it("reports cached_input_tokens from the usage of the last streamed chunk", () => {
    const parse = makeOpenAiChunkParser()
    const chunk = parse(JSON.stringify({
      choices: [],
      usage: { prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } }
    }))
    expect(chunk).toMatchObject({ usage: { input_tokens: 11, output_tokens: 7, cached_input_tokens: 3 } })
  })

  it("reads tool calls with their ids, names and raw arguments", () => {
    expect(explained(parseOpenAiResponse(JSON.stringify(toolResponse)))).toEqual({
      output: [
        { type: "tool_call", id: "call_abc123", raw_name: "get_current_weather", raw_arguments: "{\n\"location\": \"Boston, MA\"\n}" },
        { type: "tool_call", id: "call_def456", raw_name: "get_current_weather", raw_arguments: "{\"location\": \"Paris\"}" }
      ],
      usage: { input_tokens: 82, output_tokens: 17 },
      finishReason: "tool_call"
    })
  })

  it("reads reasoning_content (DeepSeek, vLLM) or reasoning as a thought before the text", () => {
    const withReasoning = (field: string) =>
      JSON.stringify({
        choices: [{ index: 0, message: { role: "assistant", content: "42", [field]: "Let me think." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }
      })
    for (const field of ["reasoning_content", "reasoning"]) {
      expect(explained(parseOpenAiResponse(withReasoning(field)))).toEqual({
        output: [{ type: "thought", text: "Let me think." }, { type: "text", text: "42" }],
        usage: { input_tokens: 5, output_tokens: 7 },
        finishReason: "stop"
      })
    }
  })

  it("reads a refusal as text", () => {
    const parsed = explained(parseOpenAiResponse(JSON.stringify({
      choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I'm sorry, I can't help with that." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }
    })))
    expect(typeof parsed !== "string" && parsed.output).toEqual([{ type: "text", text: "I'm sorry, I can't help with that." }])
  })

  it("reads a length cut and a content filter", () => {
    const finish = (reason: string) => {
      const parsed = explained(parseOpenAiResponse(JSON.stringify({ choices: [{ message: { role: "assistant", content: "x" }, finish_reason: reason }] })))
      return typeof parsed === "string" ? parsed : parsed.finishReason
    }
    expect(finish("length")).toBe("length")
    expect(finish("content_filter")).toBe("content_filter")
  })

  it("counts zero tokens when the server reports no usage", () => {
    const parsed = explained(parseOpenAiResponse(JSON.stringify({ choices: [{ message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] })))
    expect(typeof parsed !== "string" && parsed.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
  })

  it("serialises tool arguments some servers send as an object", () => {
    const parsed = explained(parseOpenAiResponse(JSON.stringify({
      choices: [{
        message: { role: "assistant", tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: { a: 1 } } }] },
        finish_reason: "tool_calls"
      }]
    })))
    expect(typeof parsed !== "string" && parsed.output).toEqual([{ type: "tool_call", id: "1", raw_name: "f", raw_arguments: `{"a":1}` }])
  })

  it("explains a body that is not JSON or has no message", () => {
    expect(explained(parseOpenAiResponse("<html>Bad Gateway</html>"))).toBe("the provider answered with a body that is not JSON")
    expect(explained(parseOpenAiResponse(JSON.stringify({ choices: [] })))).toBe("the provider answered without choices[0].message")
    expect(explained(parseOpenAiResponse(JSON.stringify({ object: "list" })))).toBe("the provider answered without choices[0].message")
    expect(explained(parseOpenAiResponse("null"))).toBe("the provider answered without choices[0].message")
  })
})

describe("finishReasonOf and usageOf", () => {
  it("maps OpenAI's finish reasons", () => {
    expect(finishReasonOf("stop")).toBe("stop")
    expect(finishReasonOf("length")).toBe("length")
    expect(finishReasonOf("tool_calls")).toBe("tool_call")
    expect(finishReasonOf("function_call")).toBe("tool_call")
    expect(finishReasonOf("content_filter")).toBe("content_filter")
    expect(finishReasonOf("something_new")).toBe("unknown")
    expect(finishReasonOf(null)).toBeUndefined()
    expect(finishReasonOf(undefined)).toBeUndefined()
  })

  it("maps usage, counting what is missing or not a number as 0", () => {
    expect(usageOf({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 })).toEqual({ input_tokens: 3, output_tokens: 4 })
    expect(usageOf({ prompt_tokens: "3" })).toEqual({ input_tokens: 0, output_tokens: 0 })
    expect(usageOf(null)).toBeUndefined()
    expect(usageOf(undefined)).toBeUndefined()
  })
})

describe("errorMessageOf", () => {
  it("takes the message of an OpenAI error body (the runner prefixes the status)", () => {
    const body = JSON.stringify({
      error: {
        message: "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key"
      }
    })
    expect(errorMessageOf(body)).toBe(
      "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys."
    )
  })

  it("takes an error given as a string, and nothing from a body without one", () => {
    expect(errorMessageOf(JSON.stringify({ error: "overloaded" }))).toBe("overloaded")
    expect(errorMessageOf("Bad Gateway")).toBeUndefined()
    expect(errorMessageOf(JSON.stringify({ detail: "x" }))).toBeUndefined()
  })
})

describe("makeOpenAiChunkParser", () => {
  const parseAll = (payloads: ReadonlyArray<unknown>) => {
    const parse = makeOpenAiChunkParser()
    return payloads.map((payload) => explained(parse(typeof payload === "string" ? payload : JSON.stringify(payload))))
  }
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({
    id: "chatcmpl-123",
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    system_fingerprint: "fp_44709d6fcb",
    choices: [{ index: 0, delta, logprobs: null, finish_reason }]
  })
  const usageChunk = {
    id: "chatcmpl-123",
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    choices: [],
    usage: { prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 }
  }

  it("parses a streamed text answer: deltas, finish reason, usage (the framing ends it at [DONE])", () => {
    const payloads = [
      chunk({ role: "assistant", content: "", refusal: null }),
      chunk({ content: "Hello" }),
      chunk({ content: " there" }),
      chunk({}, "stop"),
      usageChunk
    ]
    const chunks = parseAll(payloads)
    expect(chunks.map((c) => (c as ProviderChunk).content)).toEqual([
      [],
      [{ type: "text", id: "0", text: "Hello" }],
      [{ type: "text", id: "0", text: " there" }],
      [],
      []
    ])
    expect((chunks[3] as ProviderChunk).finishReason).toBe("stop")
    expect((chunks[3] as ProviderChunk).usage).toBeUndefined()
    expect((chunks[4] as ProviderChunk).usage).toEqual({ input_tokens: 9, output_tokens: 12 })
    expect((chunks[4] as ProviderChunk).finishReason).toBeUndefined()
    // each chunk keeps the provider's text
    expect((chunks[1] as ProviderChunk).raw).toBe(JSON.stringify(payloads[1]))
  })

  it("keys tool call deltas by index, with the id that only the first delta carries", () => {
    const chunks = parseAll([
      chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_A", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"loc" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_B", type: "function", function: { name: "search", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "ation\":\"Paris\"}" } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }),
      chunk({}, "tool_calls")
    ]) as Array<ProviderChunk>
    expect(chunks.flatMap((c) => c.content)).toEqual([
      { type: "tool_call", id: "call_A", raw_name: "get_weather", raw_arguments: "" },
      { type: "tool_call", id: "call_A", raw_name: "", raw_arguments: "{\"loc" },
      { type: "tool_call", id: "call_B", raw_name: "search", raw_arguments: "" },
      { type: "tool_call", id: "call_A", raw_name: "", raw_arguments: "ation\":\"Paris\"}" },
      { type: "tool_call", id: "call_B", raw_name: "", raw_arguments: "{}" }
    ])
    expect(chunks[5].finishReason).toBe("tool_call")
  })

  it("does not share tool call ids between two streams", () => {
    const first = makeOpenAiChunkParser()
    const second = makeOpenAiChunkParser()
    first(JSON.stringify(chunk({ tool_calls: [{ index: 0, id: "call_first", function: { name: "f", arguments: "" } }] })))
    const parsed = explained(second(JSON.stringify(chunk({ tool_calls: [{ index: 0, id: "call_second", function: { name: "f", arguments: "" } }] }))))
    expect((parsed as ProviderChunk).content).toEqual([{ type: "tool_call", id: "call_second", raw_name: "f", raw_arguments: "" }])
  })

  it("reads streamed reasoning as thought deltas", () => {
    const [parsed] = parseAll([chunk({ reasoning_content: "Thinking..." })]) as Array<ProviderChunk>
    expect(parsed.content).toEqual([{ type: "thought", id: "0", text: "Thinking..." }])
  })

  it("explains an error chunk", () => {
    expect(parseAll([{ error: { message: "The server had an error while processing your request.", type: "server_error" } }])[0]).toBe(
      "the provider streamed an error: The server had an error while processing your request."
    )
    expect(parseAll([{ error: "boom" }])[0]).toBe(`the provider streamed an error: "boom"`)
  })

  it("explains a chunk that is not JSON", () => {
    expect(parseAll(["{\"choices\": ["])[0]).toBe("the provider streamed a chunk that is not JSON")
  })
})
