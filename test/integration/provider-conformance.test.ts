/**
 * Cross-provider conformance: the scenario table of test/support/conformance.ts run through a
 * running gateway against every subject of test/conformance/*.ts (each provider type's fake).
 * One gateway per subject, the subjects side by side; each scenario is one test asserting the
 * canonical answer on /inference, or, for a scenario the subject declares unsupported, the
 * refusal naming the provider and the feature.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ConformanceSubject,
  conformanceImage,
  joinedToolCalls,
  marker,
  type RunningFake,
  type Scenario,
  scenarios,
  streamedWeatherCalls
} from "../support/conformance.ts"
import { conformanceConfig } from "../support/conformanceConfig.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const conformanceDir = path.join(import.meta.dirname, "../conformance")

const loadSubjects = async (): Promise<ReadonlyArray<ConformanceSubject>> => {
  const subjects: Array<ConformanceSubject> = []
  for (const file of fs.readdirSync(conformanceDir).filter((name) => name.endsWith(".ts")).sort()) {
    const module: { readonly subjects?: ReadonlyArray<ConformanceSubject> } = await import(path.join(conformanceDir, file))
    if (!Array.isArray(module.subjects)) throw new Error(`test/conformance/${file} exports no \`subjects\` array`)
    subjects.push(...module.subjects)
  }
  return subjects
}

const subjects = await loadSubjects()

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] })

/** The /inference request of a scenario (its first, for the thought round trip). */
const requestOf = (scenario: Scenario): Record<string, unknown> => {
  const said = (text: string) => ({ messages: [user(text)] })
  switch (scenario) {
    case "text":
    case "error":
    case "usage":
    case "thought_round_trip":
      return { function_name: "chat", input: said(marker(scenario)) }
    case "stream":
      return { function_name: "chat", input: said(marker(scenario)), stream: true }
    case "tool_call":
      return { function_name: "weather", input: said(`${marker(scenario)} What is the weather in Paris?`) }
    case "parallel_tool_calls":
    case "streamed_tool_calls":
      return {
        function_name: "weather",
        input: said(`${marker(scenario)} What is the weather in Paris and in London?`),
        parallel_tool_calls: true,
        ...(scenario === "streamed_tool_calls" ? { stream: true } : {})
      }
    case "json_strict":
      return { function_name: "json", variant_name: "strict", input: said(`${marker(scenario)} Answer in JSON.`) }
    case "json_tool":
      return { function_name: "json", variant_name: "tool", input: said(`${marker(scenario)} Answer in JSON.`) }
    case "image":
      return {
        function_name: "chat",
        input: {
          messages: [{
            role: "user",
            content: [
              { type: "text", text: `${marker(scenario)} What is in this image?` },
              { type: "file", file_type: "base64", mime_type: conformanceImage.mimeType, data: conformanceImage.data }
            ]
          }]
        }
      }
  }
}

const weatherCall = (id: string, city: string) => ({
  type: "tool_call",
  id,
  name: "get_weather",
  arguments: { city },
  raw_name: "get_weather",
  raw_arguments: JSON.stringify({ city })
})

/** Runs a scenario the subject supports and asserts the canonical answer. */
const conforms = async (gateway: RunningGateway, scenario: Scenario): Promise<void> => {
  const request = requestOf(scenario)
  if (scenario === "stream") {
    const { status, events, raw } = await gateway.stream("/inference", request)
    expect(status, raw).toBe(200)
    expect(events.at(-1)).toBe("[DONE]")
    const textDeltas = events.slice(0, -1).flatMap((event) => event.content ?? []).filter((delta: any) => delta.type === "text")
    expect(textDeltas.length).toBeGreaterThanOrEqual(2)
    expect(textDeltas.map((delta: any) => delta.text).join("")).toBe("conformance text")
    return
  }
  if (scenario === "streamed_tool_calls") {
    const { status, events, raw } = await gateway.stream("/inference", request)
    expect(status, raw).toBe(200)
    expect(events.at(-1)).toBe("[DONE]")
    expect(joinedToolCalls(events)).toEqual(streamedWeatherCalls)
    expect(events.at(-2).finish_reason).toBe("tool_call")
    return
  }
  const { status, body } = await gateway.post("/inference", request)
  if (scenario === "error") {
    expect(status, JSON.stringify(body)).toBe(400)
    expect(body.error).toContain("conformance: prompt is too long")
    return
  }
  expect(status, JSON.stringify(body)).toBe(200)
  switch (scenario) {
    case "text":
      expect(body.content).toEqual([{ type: "text", text: "conformance text" }])
      expect(body.finish_reason).toBe("stop")
      break
    case "usage":
      expect(body.content).toEqual([{ type: "text", text: "conformance text" }])
      expect(body.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 })
      break
    case "tool_call":
      expect(body.content).toEqual([weatherCall("call_1", "Paris")])
      expect(body.finish_reason).toBe("tool_call")
      break
    case "parallel_tool_calls":
      expect(body.content).toEqual([weatherCall("call_1", "Paris"), weatherCall("call_2", "London")])
      expect(body.finish_reason).toBe("tool_call")
      break
    case "json_strict":
    case "json_tool":
      expect(body.output).toEqual({ raw: "{\"answer\":\"conformance\"}", parsed: { answer: "conformance" } })
      break
    case "image":
      expect(body.content).toEqual([{ type: "text", text: "image received" }])
      break
    case "thought_round_trip": {
      const thought = body.content.find((block: any) => block.type === "thought")
      expect(thought).toMatchObject({ type: "thought", text: "thinking" })
      expect(body.content.filter((block: any) => block.type === "text")).toEqual([{ type: "text", text: "first" }])
      // the assistant's turn sent back as the gateway returned it (thought and signature included)
      const second = await gateway.post("/inference", {
        function_name: "chat",
        episode_id: body.episode_id,
        input: {
          messages: [
            user(marker("thought_round_trip")),
            { role: "assistant", content: body.content },
            user(marker("thought_round_trip_2"))
          ]
        }
      })
      expect(second.status, JSON.stringify(second.body)).toBe(200)
      expect(second.body.content.filter((block: any) => block.type === "text")).toEqual([{ type: "text", text: "second" }])
      break
    }
  }
}

/** Runs a scenario the subject declares unsupported: the gateway refuses it with `refusal` in its message. */
const refuses = async (gateway: RunningGateway, scenario: Scenario, refusal: string): Promise<void> => {
  const { status, body } = await gateway.post("/inference", requestOf(scenario))
  expect(status, JSON.stringify(body)).toBe(400)
  expect(body.error).toContain(refusal)
}

/**
 * At most this many gateways start at once: a start is a Node process loading the gateway
 * (CPU-bound for a second or two), and a dozen at once on a small machine outlast the start-up
 * timeout. The scenarios of started subjects run side by side all the same.
 */
const concurrentStarts = 2
let starting = 0
const waiting: Array<() => void> = []
const withStartSlot = async <A>(start: () => Promise<A>): Promise<A> => {
  if (starting >= concurrentStarts) await new Promise<void>((resolve) => waiting.push(resolve))
  starting++
  try {
    return await start()
  } finally {
    starting--
    waiting.shift()?.()
  }
}

/** the describe label of each subject: its type, numbered when several subjects share one */
const labels = subjects.map((subject, index) => {
  const sameType = subjects.filter((other) => other.type === subject.type)
  return sameType.length === 1 ? subject.type : `${subject.type} #${sameType.indexOf(subject) + 1}`
})

describe.concurrent("provider conformance", () => {
  subjects.forEach((subject, index) => {
    describe(labels[index], () => {
      let fake: RunningFake | undefined
      let gateway: RunningGateway | undefined
      beforeAll(() =>
        withStartSlot(async () => {
          fake = await subject.start()
          const { config, files } = conformanceConfig(fake)
          gateway = await startGateway({ config, files, env: { ...fake.env } })
        }), 180_000)
      afterAll(async () => {
        await gateway?.stop()
        await fake?.close()
      })
      for (const scenario of scenarios) {
        const refusal = subject.unsupported?.[scenario]
        it(refusal === undefined ? scenario : `${scenario} (refused)`, async () => {
          if (refusal === undefined) await conforms(gateway!, scenario)
          else await refuses(gateway!, scenario, refusal)
        })
      }
    })
  })
})
