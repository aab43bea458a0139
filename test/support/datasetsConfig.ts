/**
 * A configuration for the dataset suites (test/integration/datasets-*.test.ts): a chat function
 * with a system schema and a tool, a chat function with a user schema and templates, a plain
 * chat function, and a json function with an output schema; and datapoints that fit them.
 */
// the json function's output schema is the dummy suites'
import { answerSchema } from "./dummyConfig.ts"
import { observabilityToml } from "./observability.ts"

export const temperatureParameters = {
  type: "object",
  properties: { location: { type: "string" } },
  required: ["location"],
  additionalProperties: false
}


export const datasetsConfigFiles: Record<string, string> = {
  "tools/get_temperature.json": JSON.stringify(temperatureParameters),
  "tools/get_humidity.json": JSON.stringify(temperatureParameters),
  "schemas/system.json": JSON.stringify({
    type: "object",
    properties: { assistant_name: { type: "string" } },
    required: ["assistant_name"],
    additionalProperties: false
  }),
  "schemas/user.json": JSON.stringify({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false
  }),
  "schemas/answer.json": JSON.stringify(answerSchema),
  "templates/system.minijinja": "You are {{ assistant_name }}.",
  "templates/user.minijinja": "What is the weather in {{ city }}?",
  "templates/greeting.minijinja": "Greetings, {{ who }}!"
}

export const datasetsConfig = `
${observabilityToml()}

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"

[tools.get_humidity]
description = "Get the current humidity of a place"
parameters = "tools/get_humidity.json"

[functions.assistant]
type = "chat"
schemas.system.path = "schemas/system.json"
tools = ["get_temperature"]
[functions.assistant.variants.only]
type = "chat_completion"
model = "dummy::hello"
templates.system.path = "templates/system.minijinja"

[functions.templated]
type = "chat"
schemas.user.path = "schemas/user.json"
[functions.templated.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.user.path = "templates/user.minijinja"
templates.greeting.path = "templates/greeting.minijinja"

[functions.plain]
type = "chat"
[functions.plain.variants.only]
type = "chat_completion"
model = "dummy::hello"

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.only]
type = "chat_completion"
model = "dummy::json"
`

/** a chat datapoint of `assistant` asking about `text`, answered with a text and a tool call */
export const chatDatapoint = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "chat",
  function_name: "assistant",
  input: { system: { assistant_name: "Ada" }, messages: [{ role: "user", content: text }] },
  output: [{ type: "text", text: "Checking." }, { type: "tool_call", id: "call_1", name: "get_temperature", arguments: { location: "Paris" } }],
  ...extra
})

/** a json datapoint of `extract` */
export const jsonDatapoint = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "json",
  function_name: "extract",
  input: { messages: [{ role: "user", content: text }] },
  output: { answer: "42" },
  ...extra
})
