import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { InvalidRequest, NotFound } from "../../src/errors.ts"
import { checkDemonstration, planFeedback as planFeedbackResult } from "../../src/feedback/validate.ts"
import { uuidv7 } from "../../src/ids.ts"
import { buildOk, json } from "./fixtures.ts"

const weather = json({
  type: "object",
  properties: { location: { type: "string" } },
  required: ["location"],
  additionalProperties: false
})
const answerSchema = json({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })

const config = buildOk(`
[metrics.liked]
type = "boolean"
level = "inference"

[metrics.score]
type = "float"
level = "episode"

[tools.get_weather]
description = "weather"
parameters = "weather.json"

[functions.chat]
type = "chat"
tools = ["get_weather"]
[functions.chat.variants.v]
type = "chat_completion"
model = "dummy::x"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`, { files: { "/cfg/weather.json": weather, "/cfg/answer.json": answerSchema } })

const id = uuidv7(Date.now())

/** the plan, or the refusal */
const planFeedback = (...args: Parameters<typeof planFeedbackResult>) => Result.merge(planFeedbackResult(...args))

const messageOf = (result: unknown) => {
  expect(result).toBeInstanceOf(InvalidRequest)
  return (result as InvalidRequest).message
}

describe("planFeedback", () => {
  it("plans a boolean metric on an inference", () => {
    expect(planFeedback({ metric_name: "liked", value: true, inference_id: id }, config)).toEqual({
      kind: "boolean",
      metricName: "liked",
      targetType: "inference",
      targetId: id,
      value: true
    })
  })

  it("plans a float metric on an episode and a comment on either target", () => {
    expect(planFeedback({ metric_name: "score", value: 0.5, episode_id: id }, config)).toMatchObject({ kind: "float", targetType: "episode" })
    expect(planFeedback({ metric_name: "comment", value: "nice", episode_id: id }, config)).toMatchObject({ kind: "comment", targetType: "episode" })
    expect(planFeedback({ metric_name: "comment", value: "nice", inference_id: id }, config)).toMatchObject({ kind: "comment", targetType: "inference" })
  })

  it("needs exactly one target", () => {
    expect(messageOf(planFeedback({ metric_name: "liked", value: true }, config))).toBe("give exactly one of inference_id or episode_id")
    expect(messageOf(planFeedback({ metric_name: "liked", value: true, inference_id: id, episode_id: id }, config)))
      .toBe("give exactly one of inference_id or episode_id")
  })

  it("refuses a target id that is not a UUIDv7", () => {
    expect(messageOf(planFeedback({ metric_name: "liked", value: true, inference_id: "abc" }, config))).toMatch(/^inference_id: "abc"/)
    expect(messageOf(planFeedback({ metric_name: "score", value: 1, episode_id: "4b0e3d6e-7d0f-4a0b-9a6f-1c2d3e4f5a6b" }, config)))
      .toMatch(/^episode_id: /)
  })

  it("answers 404 for an unknown metric", () => {
    const result = planFeedback({ metric_name: "nope", value: true, inference_id: id }, config)
    expect(result).toBeInstanceOf(NotFound)
    expect((result as NotFound).message).toBe(`unknown metric "nope"`)
  })

  it("refuses a value of the wrong type, naming the metric", () => {
    expect(messageOf(planFeedback({ metric_name: "liked", value: "yes", inference_id: id }, config)))
      .toBe(`value: metric "liked" takes a boolean, got string`)
    expect(messageOf(planFeedback({ metric_name: "score", value: true, episode_id: id }, config)))
      .toBe(`value: metric "score" takes a number, got boolean`)
    expect(messageOf(planFeedback({ metric_name: "comment", value: 3, inference_id: id }, config)))
      .toBe("value: a comment is a string, got number")
  })

  it("refuses a metric on the wrong level of target", () => {
    expect(messageOf(planFeedback({ metric_name: "liked", value: true, episode_id: id }, config)))
      .toBe(`metric "liked" is an inference-level metric: give inference_id instead of episode_id`)
    expect(messageOf(planFeedback({ metric_name: "demonstration", value: "x", episode_id: id }, config)))
      .toMatch(/^demonstration: give the inference_id/)
  })
})

describe("checkDemonstration", () => {
  const chatTarget = { workspace: "default", functionName: "chat", functionType: "chat" as const, episodeId: id }
  const jsonTarget = { workspace: "default", functionName: "extract", functionType: "json" as const, episodeId: id }

  it("turns a string into a text block for chat functions", () => {
    expect(checkDemonstration("hello", chatTarget, config.functions.get("chat"), config)).toEqual({
      value: [{ type: "text", text: "hello" }]
    })
  })

  it("accepts text and valid tool calls of the function's tools", () => {
    const value = [{ type: "text", text: "calling" }, { type: "tool_call", name: "get_weather", arguments: { location: "Paris" } }]
    expect(checkDemonstration(value, chatTarget, config.functions.get("chat"), config)).toEqual({ value })
  })

  it("refuses unknown tools, bad arguments and other blocks", () => {
    const fn = config.functions.get("chat")
    expect(checkDemonstration([{ type: "tool_call", name: "nope", arguments: {} }], chatTarget, fn, config))
      .toEqual({ problem: `value[0].name: "nope" is not a tool of this function` })
    expect(checkDemonstration([{ type: "tool_call", name: "get_weather", arguments: { city: 1 } }], chatTarget, fn, config))
      .toMatchObject({ problem: expect.stringMatching(/^value\[0\]\.arguments: do not fit the parameters of "get_weather"/) })
    expect(checkDemonstration([{ type: "image" }], chatTarget, fn, config))
      .toEqual({ problem: `value[0].type: a demonstration holds "text" and "tool_call" blocks` })
    expect(checkDemonstration(42, chatTarget, fn, config))
      .toEqual({ problem: "value: a chat demonstration is a string or a list of content blocks, got number" })
  })

  it("checks json demonstrations against the output schema (the inference's own first)", () => {
    const fn = config.functions.get("extract")
    expect(checkDemonstration({ answer: "hi" }, jsonTarget, fn, config)).toEqual({ value: { answer: "hi" } })
    expect(checkDemonstration({ other: 1 }, jsonTarget, fn, config))
      .toMatchObject({ problem: expect.stringMatching(/^value: does not fit the output schema/) })
    const overridden = { ...jsonTarget, outputSchema: { type: "object", required: ["other"] } }
    expect(checkDemonstration({ other: 1 }, overridden, fn, config)).toEqual({ value: { other: 1 } })
  })
})
