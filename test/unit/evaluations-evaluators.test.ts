import { describe, expect, it } from "vitest"
import { Input } from "../../src/api/inference.ts"
import type { ConfiguredRegex, ToolUseBehavior } from "../../src/config/types.ts"
import type { StoredDatapoint } from "../../src/datasets/store.ts"
import { makeDecoder } from "../../src/decode.ts"
import {
  type DeterministicEvaluator,
  type Evaluated,
  evaluatedSystemPrefix,
  judgeInput,
  type JudgeEvaluator,
  judgeScore,
  maxJudgeSectionLength,
  outputText,
  scoreOutput
} from "../../src/evaluations/evaluators.ts"
import type { ChatOutputBlock, JsonOutput } from "../../src/inference/output.ts"
import type { ModelRequest, RequestMessage } from "../../src/inference/types.ts"

const decodeInput = makeDecoder(Input)

const common = { metricName: "m", optimize: "max", outputType: "boolean" } as const

const regex = (source: string): ConfiguredRegex => {
  const re = new RegExp(source, "u")
  return { source, test: (text) => re.test(text) }
}

const exactMatch: DeterministicEvaluator = { ...common, name: "exact", type: "exact_match" }
const regexEvaluator = (mustMatch?: string, mustNotMatch?: string): DeterministicEvaluator => ({
  ...common,
  name: "re",
  type: "regex",
  mustMatch: mustMatch === undefined ? undefined : regex(mustMatch),
  mustNotMatch: mustNotMatch === undefined ? undefined : regex(mustNotMatch)
})
const toolUse = (behavior: ToolUseBehavior, tools: ReadonlyArray<string> = []): DeterministicEvaluator => ({
  ...common,
  name: "tools",
  type: "tool_use",
  behavior,
  tools
})
const judge = (fields: Partial<JudgeEvaluator> = {}): JudgeEvaluator => ({
  ...common,
  name: "judge",
  type: "llm_judge",
  includeReferenceOutput: false,
  inputFormat: "serialized",
  judgeFunctionName: "gateway::llm_judge::fn::judge",
  ...fields
})

const datapointInput = { system: { persona: "pirate" }, messages: [{ role: "user", content: "What is the capital of France?" }] }

const datapoint = (functionType: "chat" | "json", output?: unknown, input: unknown = datapointInput): StoredDatapoint => ({
  id: "0192e3a4-0000-7000-8000-000000000001",
  datasetName: "ds",
  functionName: "fn",
  functionType,
  input,
  ...(output !== undefined && { output }),
  tags: {},
  isCustom: false,
  updatedAt: 0
})

const request = (messages: ReadonlyArray<RequestMessage> = [], system?: string): ModelRequest => ({
  system,
  messages,
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const text = (value: string): ChatOutputBlock => ({ type: "text", text: value })
const call = (name: string, args: string, parsed: unknown = JSON.parse(args)): ChatOutputBlock => ({
  type: "tool_call",
  id: `call_${name}`,
  name,
  arguments: parsed,
  raw_name: name,
  raw_arguments: args
})
const thought = (value: string): ChatOutputBlock => ({ type: "thought", text: value, signature: "sig" })
const unknownBlock: ChatOutputBlock = { type: "unknown", data: { x: 1 }, model_provider_name: "p" }

const chat = (output: ReadonlyArray<ChatOutputBlock>, reference?: unknown, modelRequest = request()): Evaluated => ({
  functionType: "chat",
  datapoint: datapoint("chat", reference),
  output,
  modelRequest
})
const json = (raw: string, reference?: unknown): Evaluated => {
  let parsed: unknown = null
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = null
  }
  return { functionType: "json", datapoint: datapoint("json", reference), output: { raw, parsed }, modelRequest: request() }
}

describe("outputText", () => {
  it("joins a chat output's text blocks with newlines, leaving out thoughts, tool calls and unknown blocks", () => {
    expect(outputText([text("one"), thought("hidden"), call("f", "{}"), unknownBlock, text("two")])).toBe("one\ntwo")
  })
  it("is empty for a chat output without text, and the raw text of a json output", () => {
    expect(outputText([call("f", "{}")])).toBe("")
    expect(outputText({ raw: ` {"a": 1} `, parsed: { a: 1 } })).toBe(` {"a": 1} `)
  })
})

describe("exact_match", () => {
  it("does not apply without a reference output", () => {
    expect(scoreOutput(exactMatch, chat([text("Paris")]))).toBeNull()
    expect(scoreOutput(exactMatch, chat([text("Paris")], null))).toBeNull()
    expect(scoreOutput(exactMatch, json(`{"a":1}`))).toBeNull()
  })

  it("compares the texts of a chat output with the reference's, ignoring thoughts, tool calls and unknown blocks", () => {
    const reference = [text("Paris"), call("lookup", `{"q":"x"}`)]
    expect(scoreOutput(exactMatch, chat([thought("hmm"), text("Paris"), unknownBlock], reference))).toBe(true)
    expect(scoreOutput(exactMatch, chat([text("paris")], reference))).toBe(false)
    expect(scoreOutput(exactMatch, chat([text("Paris ")], reference))).toBe(false)
  })

  it("compares the text blocks as a sequence, not their concatenation", () => {
    const reference = [text("a"), text("b")]
    expect(scoreOutput(exactMatch, chat([text("a"), text("b")], reference))).toBe(true)
    expect(scoreOutput(exactMatch, chat([text("ab")], reference))).toBe(false)
    expect(scoreOutput(exactMatch, chat([text("b"), text("a")], reference))).toBe(false)
    expect(scoreOutput(exactMatch, chat([text("a")], reference))).toBe(false)
  })

  it("matches an empty output against an empty reference, and not against one with text", () => {
    expect(scoreOutput(exactMatch, chat([], []))).toBe(true)
    expect(scoreOutput(exactMatch, chat([], [text("x")]))).toBe(false)
    expect(scoreOutput(exactMatch, chat([text("")], []))).toBe(false)
  })

  it("compares Unicode text exactly, without normalising it", () => {
    expect(scoreOutput(exactMatch, chat([text("日本 🇫🇷 café")], [text("日本 🇫🇷 café")]))).toBe(true)
    // "é" precomposed against "e" + combining acute accent
    expect(scoreOutput(exactMatch, chat([text("caf\u00e9")], [text("cafe\u0301")]))).toBe(false)
  })

  it("deep-compares a json output's parsed value with the reference value, whatever the order of keys", () => {
    const reference = { answer: "Paris", details: { population: 2.1e6, tags: ["capital", "city"] } }
    expect(scoreOutput(exactMatch, json(`{"details":{"tags":["capital","city"],"population":2100000},"answer":"Paris"}`, reference)))
      .toBe(true)
    expect(scoreOutput(exactMatch, json(`{"answer":"Paris","details":{"population":2100000,"tags":["city","capital"]}}`, reference)))
      .toBe(false)
    expect(scoreOutput(exactMatch, json(`{"answer":"Paris","details":{"population":2100000,"tags":["capital","city"]},"x":null}`, reference)))
      .toBe(false)
    expect(scoreOutput(exactMatch, json(`{"answer":"Paris"}`, reference))).toBe(false)
  })

  it("compares json scalars and arrays by value and type", () => {
    expect(scoreOutput(exactMatch, json("1.0", 1))).toBe(true)
    expect(scoreOutput(exactMatch, json(`"1"`, 1))).toBe(false)
    expect(scoreOutput(exactMatch, json("[1,2]", [1, 2]))).toBe(true)
    expect(scoreOutput(exactMatch, json(`{"0":1,"1":2}`, [1, 2]))).toBe(false)
    expect(scoreOutput(exactMatch, json("false", false))).toBe(true)
    expect(scoreOutput(exactMatch, json(`{"a":[]}`, { a: {} }))).toBe(false)
  })

  it("scores false a json output that did not parse or fit its schema", () => {
    expect(scoreOutput(exactMatch, json("not json", { a: 1 }))).toBe(false)
    const unfit: Evaluated = { ...json(`{"a":1}`, { a: 1 }), output: { raw: `{"a":1}`, parsed: null } }
    expect(scoreOutput(exactMatch, unfit)).toBe(false)
  })
})

describe("regex", () => {
  it("needs a match of mustMatch anywhere in the text", () => {
    expect(scoreOutput(regexEvaluator("Par+is"), chat([text("It is Parrris.")]))).toBe(true)
    expect(scoreOutput(regexEvaluator("^Paris$"), chat([text("It is Paris.")]))).toBe(false)
  })

  it("needs no match of mustNotMatch", () => {
    expect(scoreOutput(regexEvaluator(undefined, "sorry|cannot"), chat([text("I cannot help")]))).toBe(false)
    expect(scoreOutput(regexEvaluator(undefined, "sorry"), chat([text("Paris")]))).toBe(true)
  })

  it("needs both when both are set", () => {
    const both = regexEvaluator("Paris", "London")
    expect(scoreOutput(both, chat([text("Paris")]))).toBe(true)
    expect(scoreOutput(both, chat([text("Paris"), text("not London")]))).toBe(false)
    expect(scoreOutput(both, chat([text("Lyon")]))).toBe(false)
  })

  it("sees the text blocks joined with newlines, not thoughts nor tool arguments", () => {
    expect(scoreOutput(regexEvaluator("^one\\ntwo$"), chat([text("one"), text("two")]))).toBe(true)
    expect(scoreOutput(regexEvaluator("secret"), chat([thought("secret"), call("f", `{"q":"secret"}`)]))).toBe(false)
  })

  it("sees a json output's raw text, and an empty text for an output without text", () => {
    expect(scoreOutput(regexEvaluator(`"answer":\\s*"Paris"`), json(`{"answer": "Paris"}`))).toBe(true)
    expect(scoreOutput(regexEvaluator("^$"), chat([]))).toBe(true)
    expect(scoreOutput(regexEvaluator("."), chat([]))).toBe(false)
  })

  it("matches Unicode text", () => {
    expect(scoreOutput(regexEvaluator("^\\p{Script=Han}+$"), chat([text("東京")]))).toBe(true)
  })
})

describe("tool_use", () => {
  const calls = chat([text("checking"), call("search", `{"q":"x"}`), call("weather", `{"city":"Paris"}`)])
  const noCalls = chat([text("no tools")])
  // a call to a tool not offered: name null, raw_name kept
  const invalidCall = chat([{ type: "tool_call", id: "c", name: null, arguments: null, raw_name: "delete_all", raw_arguments: "oops" }])

  it("none: no call at all", () => {
    expect(scoreOutput(toolUse("none"), noCalls)).toBe(true)
    expect(scoreOutput(toolUse("none"), calls)).toBe(false)
    expect(scoreOutput(toolUse("none"), invalidCall)).toBe(false)
  })

  it("any: at least one call", () => {
    expect(scoreOutput(toolUse("any"), calls)).toBe(true)
    expect(scoreOutput(toolUse("any"), noCalls)).toBe(false)
  })

  it("none_of: none of the tools called", () => {
    expect(scoreOutput(toolUse("none_of", ["delete_all", "email"]), calls)).toBe(true)
    expect(scoreOutput(toolUse("none_of", ["email", "weather"]), calls)).toBe(false)
    expect(scoreOutput(toolUse("none_of", ["delete_all"]), invalidCall)).toBe(false)
  })

  it("any_of: at least one of the tools called", () => {
    expect(scoreOutput(toolUse("any_of", ["email", "weather"]), calls)).toBe(true)
    expect(scoreOutput(toolUse("any_of", ["email"]), calls)).toBe(false)
    expect(scoreOutput(toolUse("any_of", ["weather"]), noCalls)).toBe(false)
  })

  it("all_of: every one of the tools called", () => {
    expect(scoreOutput(toolUse("all_of", ["search", "weather"]), calls)).toBe(true)
    expect(scoreOutput(toolUse("all_of", ["search", "weather", "email"]), calls)).toBe(false)
  })

  it("names tools exactly as the model called them (raw_name)", () => {
    expect(scoreOutput(toolUse("any_of", ["delete_all"]), invalidCall)).toBe(true)
    expect(scoreOutput(toolUse("any_of", ["Weather"]), calls)).toBe(false)
  })

  it("sees no tool call in a json output, even one whose text names a tool", () => {
    expect(scoreOutput(toolUse("none"), json(`{"tool_call":"weather"}`))).toBe(true)
    expect(scoreOutput(toolUse("any_of", ["weather"]), json(`{"tool_call":"weather"}`))).toBe(false)
  })
})

const onlyText = (input: Input | undefined, index = 0): string => {
  const content = input?.messages?.[index]?.content
  if (!Array.isArray(content) || content.length !== 1 || content[0].type !== "text") throw new Error("expected one text block")
  return content[0].text!
}

const decodes = (input: Input | undefined) => {
  const decoded = decodeInput(input)
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues))
  return decoded.value
}

describe("judgeInput, serialized", () => {
  it("shows one user message with the task input, the generated output and nothing of a reference not asked for", () => {
    const input = judgeInput(judge(), chat([thought("private"), text("Paris"), call("search", `{"q":"capital"}`)], [text("Paris")]))
    decodes(input)
    expect(input?.system).toBeUndefined()
    expect(input?.messages).toHaveLength(1)
    expect(input?.messages?.[0].role).toBe("user")
    const body = onlyText(input)
    expect(body).toContain("## Task input")
    expect(body).toContain(`"persona": "pirate"`)
    expect(body).toContain("What is the capital of France?")
    expect(body).toContain("## Generated output")
    expect(body).toContain(`"text": "Paris"`)
    expect(body).toContain(`"name": "search"`)
    expect(body).toContain(`"q": "capital"`)
    expect(body).not.toContain("private")
    expect(body).not.toContain("Reference output")
    expect(body).not.toContain("Evaluation criteria")
  })

  it("adds the description and the reference output when configured", () => {
    const evaluator = judge({ includeReferenceOutput: true, description: "Is the answer factually correct?" })
    const body = onlyText(decodes(judgeInput(evaluator, chat([text("Lyon")], [text("Paris"), call("search", `{"q":"x"}`)]))))
    expect(body.indexOf("## Evaluation criteria")).toBeGreaterThanOrEqual(0)
    expect(body).toContain("Is the answer factually correct?")
    const reference = body.slice(body.indexOf("## Reference output"))
    expect(body.indexOf("## Reference output")).toBeGreaterThan(body.indexOf("## Generated output"))
    expect(reference).toContain(`"text": "Paris"`)
    expect(reference).toContain(`"name": "search"`)
    expect(reference).not.toContain("Lyon")
  })

  it("cannot judge against a reference the datapoint does not have", () => {
    expect(judgeInput(judge({ includeReferenceOutput: true }), chat([text("Paris")]))).toBeUndefined()
    expect(judgeInput(judge({ includeReferenceOutput: true, inputFormat: "messages" }), json(`{"a":1}`))).toBeUndefined()
    expect(judgeInput(judge({ includeReferenceOutput: false }), chat([text("Paris")]))).toBeDefined()
  })

  it("shows a json output's raw text and a json reference as JSON", () => {
    const body = onlyText(decodes(judgeInput(judge({ includeReferenceOutput: true }), json(`{"answer":  "Lyon"}`, { answer: "Paris" }))))
    expect(body).toContain(`{"answer":  "Lyon"}`)
    expect(body.slice(body.indexOf("## Reference output"))).toContain(`"answer": "Paris"`)
  })

  it("shows a tool call that did not validate by its raw name and text", () => {
    const output: ReadonlyArray<ChatOutputBlock> = [
      { type: "tool_call", id: "c", name: null, arguments: null, raw_name: "delete_all", raw_arguments: "{not json" }
    ]
    const body = onlyText(decodes(judgeInput(judge(), chat(output))))
    expect(body).toContain(`"name": "delete_all"`)
    expect(body).toContain(`"arguments": "{not json"`)
  })

  it("keeps sections bounded, names base64 file data instead of showing it, and fences text holding backticks", () => {
    const long = "é".repeat(maxJudgeSectionLength + 500)
    const input = {
      messages: [{
        role: "user",
        content: [{ type: "file", file_type: "base64", data: "QUJD".repeat(50_000), mime_type: "image/png" }, { type: "text", text: "```\ncode\n```" }]
      }]
    }
    const evaluated: Evaluated = { ...chat([text(long)]), datapoint: datapoint("chat", undefined, input) }
    const body = onlyText(decodes(judgeInput(judge(), evaluated)))
    expect(body.length).toBeLessThan(2 * maxJudgeSectionLength)
    expect(body).toContain("[200000 characters of base64 data]")
    expect(body).not.toContain("QUJDQUJD")
    expect(body).toContain("more characters left out]")
    // the input's own ``` cannot close the section's fence
    expect(body).toMatch(/## Task input\n````\n/)
  })

  it("keeps Unicode intact", () => {
    const body = onlyText(decodes(judgeInput(judge(), chat([text("Ответ: 東京 🗼")]))))
    expect(body).toContain("Ответ: 東京 🗼")
  })
})

describe("judgeInput, messages", () => {
  const conversation: ReadonlyArray<RequestMessage> = [
    { role: "user", content: [{ type: "text", text: "Weather in Paris?" }, { type: "file", source: { kind: "url", url: "https://x/y.png" }, detail: "low" }] },
    {
      role: "assistant",
      content: [
        { type: "thought", text: "let me think", signature: "s" },
        { type: "tool_call", id: "c1", name: "weather", arguments: `{"city":"Paris"}` },
        { type: "tool_call", id: "c2", name: "grep", arguments: "free text" },
        { type: "tool_call", id: "c3", name: "echo", arguments: `"quoted"` }
      ]
    },
    {
      role: "user",
      content: [
        { type: "tool_result", id: "c1", name: "weather", result: "sunny" },
        { type: "file", source: { kind: "base64", data: "QUJD", mimeType: "image/png" } }
      ]
    },
    { role: "assistant", content: [{ type: "unknown", data: { opaque: true }, modelProviderName: "p" }] }
  ]
  const evaluated = chat([text("It is sunny.")], [text("Sunny.")], request(conversation, "You are a weather bot."))

  it("replays the evaluated conversation, system first, then asks about the output", () => {
    const input = decodes(judgeInput(judge({ inputFormat: "messages", description: "Helpful?" }), evaluated))
    expect(input.system).toBeUndefined()
    expect(input.messages).toEqual([
      { role: "user", content: [{ type: "text", text: `${evaluatedSystemPrefix}\n\nYou are a weather bot.` }] },
      {
        role: "user",
        content: [{ type: "text", text: "Weather in Paris?" }, { type: "file", file_type: "url", url: "https://x/y.png", detail: "low" }]
      },
      {
        role: "assistant",
        content: [
          { type: "tool_call", id: "c1", name: "weather", arguments: { city: "Paris" } },
          { type: "tool_call", id: "c2", name: "grep", arguments: "free text" },
          // a JSON string is kept as its text, quotes included
          { type: "tool_call", id: "c3", name: "echo", arguments: `"quoted"` }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", id: "c1", name: "weather", result: "sunny" },
          { type: "file", file_type: "base64", data: "QUJD", mime_type: "image/png" }
        ]
      },
      // the message of only an unknown block is gone
      expect.objectContaining({ role: "user" })
    ])
    const last = onlyText(input, 4)
    expect(last).toContain("Helpful?")
    expect(last).toContain("## Generated output")
    expect(last).toContain("It is sunny.")
    expect(last).not.toContain("Reference output")
  })

  it("adds the reference output to the last message when included, and has no system message without a system", () => {
    const input = decodes(judgeInput(
      judge({ inputFormat: "messages", includeReferenceOutput: true }),
      chat([text("It is sunny.")], [text("Sunny.")], request([{ role: "user", content: [{ type: "text", text: "Weather?" }] }]))
    ))
    expect(input.messages).toHaveLength(2)
    expect(input.messages?.[0]).toEqual({ role: "user", content: [{ type: "text", text: "Weather?" }] })
    const last = onlyText(input, 1)
    expect(last).toContain("## Reference output")
    expect(last.slice(last.indexOf("## Reference output"))).toContain("Sunny.")
  })

  it("shows a json output's raw text after the conversation", () => {
    const evaluatedJson: Evaluated = { ...json(`{"temp": 21}`), modelRequest: request([], "Answer in JSON.") }
    const input = decodes(judgeInput(judge({ inputFormat: "messages" }), evaluatedJson))
    expect(input.messages).toHaveLength(2)
    expect(onlyText(input, 1)).toContain(`{"temp": 21}`)
  })
})

describe("judgeScore", () => {
  const answer = (raw: string): JsonOutput => {
    try {
      return { raw, parsed: JSON.parse(raw) }
    } catch {
      return { raw, parsed: null }
    }
  }
  const booleanJudge = judge()
  const floatJudge = judge({ outputType: "float" })

  it("reads the score of the judge's output type", () => {
    expect(judgeScore(booleanJudge, answer(`{"thinking":"ok","score":true}`))).toBe(true)
    expect(judgeScore(booleanJudge, answer(`{"thinking":"no","score":false}`))).toBe(false)
    expect(judgeScore(floatJudge, answer(`{"thinking":"ok","score":0.75}`))).toBe(0.75)
    expect(judgeScore(floatJudge, answer(`{"score":-3}`))).toBe(-3)
  })

  it("refuses a score of the other type", () => {
    expect(judgeScore(booleanJudge, answer(`{"thinking":"","score":1}`))).toEqual({
      problem: `the judge's answer has a score that is not a boolean: "{\\"thinking\\":\\"\\",\\"score\\":1}"`
    })
    expect(judgeScore(floatJudge, answer(`{"thinking":"","score":true}`))).toHaveProperty("problem")
    expect(judgeScore(floatJudge, answer(`{"thinking":"","score":"0.5"}`))).toHaveProperty("problem")
    expect(judgeScore(floatJudge, answer(`{"thinking":"","score":null}`))).toHaveProperty("problem")
  })

  it("refuses a number that is not finite", () => {
    const problem = judgeScore(floatJudge, answer(`{"thinking":"","score":1e999}`))
    expect(problem).toEqual({ problem: expect.stringContaining("not a finite number") })
    expect(judgeScore(floatJudge, { raw: "NaN", parsed: { score: Number.NaN } })).toHaveProperty("problem")
  })

  it("refuses an answer that is not an object with a score", () => {
    expect(judgeScore(booleanJudge, answer("I think it is correct"))).toEqual({
      problem: `the judge's answer is not a JSON object fitting its output schema: "I think it is correct"`
    })
    expect(judgeScore(booleanJudge, answer(`[true]`))).toHaveProperty("problem")
    expect(judgeScore(booleanJudge, answer(`true`))).toHaveProperty("problem")
    expect(judgeScore(booleanJudge, answer(`{"thinking":"hm"}`))).toEqual({
      problem: `the judge's answer has no score: "{\\"thinking\\":\\"hm\\"}"`
    })
  })

  it("quotes at most 200 characters of a long answer, without splitting a character", () => {
    const raw = `${"a".repeat(199)}😀${"b".repeat(1000)}`
    const result = judgeScore(booleanJudge, { raw, parsed: null })
    if (result === null || typeof result !== "object") throw new Error("expected a problem")
    // the emoji (a surrogate pair) would straddle the 200th character: it is left out whole
    expect(result.problem).toBe(`the judge's answer is not a JSON object fitting its output schema: "${"a".repeat(199)}"...`)
  })
})
