/**
 * A configuration for the evaluation suites (test/integration/evaluations-*.test.ts): functions
 * on dummy models whose answers are known, evaluators of every type, judges served by a fake
 * OpenAI server that answers the judge's JSON deterministically (`judgeReply`), and a
 * configured evaluation.
 */
import { dummyHelloText } from "../../src/providers/dummy/index.ts"
import { answerSchema } from "./dummyConfig.ts"
import { completion, type FakeOpenAi, type ReceivedRequest, type Reply } from "./fakeOpenAi.ts"
import { observabilityToml } from "./observability.ts"

export { dummyHelloText }

const parameters = JSON.stringify({
  type: "object",
  properties: { location: { type: "string" } },
  required: ["location"],
  additionalProperties: false
})

export const evaluationsConfigFiles: Record<string, string> = {
  "tools/get_temperature.json": parameters,
  "tools/get_humidity.json": parameters,
  "schemas/answer.json": JSON.stringify(answerSchema),
  "judge/boolean.txt": "Answer true when the generated output greets the user. {{ not a template }}",
  "judge/float.txt": "Score the output from 0 to 1."
}

/** `[models.judge]` and the other judge models, served by `fake` */
export const evaluationsConfig = (fake: FakeOpenAi) => `
${observabilityToml()}

[models.judge]
routing = ["fake"]
[models.judge.providers.fake]
type = "openai"
model_name = "judge-model"
api_base = "${fake.apiBase}"
api_key_location = "none"

[models.broken_judge]
routing = ["fake"]
[models.broken_judge.providers.fake]
type = "openai"
model_name = "broken-judge"
api_base = "${fake.apiBase}"
api_key_location = "none"

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"

[tools.get_humidity]
description = "Get the current humidity of a place"
parameters = "tools/get_humidity.json"

[functions.greet]
type = "chat"
[functions.greet.variants.fixed]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.greet.variants.failing]
type = "chat_completion"
model = "dummy::error"
weight = 0
[functions.greet.variants.slow]
type = "chat_completion"
model = "dummy::delay_500ms"
weight = 0

[functions.greet.evaluators.exact]
type = "exact_match"
[functions.greet.evaluators.mentions_dummy]
type = "regex"
must_match = "dummy provider"
must_not_match = "(?i)error"
[functions.greet.evaluators.greets]
type = "llm_judge"
output_type = "boolean"
include = { reference_output = true }
[functions.greet.evaluators.greets.variants.fake]
type = "chat_completion"
model = "judge"
system_instructions = "judge/boolean.txt"
json_mode = "strict"
active = true
[functions.greet.evaluators.quality]
type = "llm_judge"
output_type = "float"
optimize = "max"
[functions.greet.evaluators.quality.variants.fake]
model = "judge"
system_instructions = "judge/float.txt"
[functions.greet.evaluators.broken]
type = "llm_judge"
output_type = "boolean"
[functions.greet.evaluators.broken.variants.fake]
model = "broken_judge"
system_instructions = "judge/boolean.txt"

[functions.weather]
type = "chat"
tools = ["get_temperature", "get_humidity"]
[functions.weather.variants.only]
type = "chat_completion"
model = "dummy::offered_tool"
[functions.weather.evaluators.uses_temperature]
type = "tool_use"
behavior = "any_of"
tools = ["get_temperature"]
[functions.weather.evaluators.uses_both]
type = "tool_use"
behavior = "all_of"
tools = ["get_temperature", "get_humidity"]
[functions.weather.evaluators.no_tools]
type = "tool_use"
behavior = "none"

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.only]
type = "chat_completion"
model = "dummy::json"
[functions.extract.evaluators.exact]
type = "exact_match"

[evaluations.greeting]
type = "static"
function_name = "greet"
[evaluations.greeting.evaluators.exact]
type = "exact_match"
cutoff = 0.5
[evaluations.greeting.evaluators.polite]
type = "regex"
must_match = "^Hello"
`

/** the text of the judge's request (its messages' contents), lower-cased */
const requestText = (request: ReceivedRequest): string =>
  JSON.stringify(request.body?.messages ?? []).toLowerCase()

/**
 * The fake judge: `broken-judge` answers 500; the float judge scores 0.75; the boolean judge
 * says true when what it is shown holds the dummy's greeting.
 */
export const judgeReply = (request: ReceivedRequest): Reply => {
  if (request.body?.model === "broken-judge") return { kind: "json", status: 500, body: { error: { message: "the judge is down" } } }
  const text = requestText(request)
  const score = text.includes("score the output") ? 0.75 : text.includes("hello from the dummy provider")
  return { kind: "json", body: completion({ content: JSON.stringify({ thinking: "judged by the fake", score }) }) }
}

/** a datapoint of `greet` whose reference output is `reference` */
export const greetDatapoint = (text: string, reference: string = dummyHelloText) => ({
  type: "chat",
  function_name: "greet",
  input: { messages: [{ role: "user", content: text }] },
  output: [{ type: "text", text: reference }]
})

export const weatherDatapoint = (text: string) => ({
  type: "chat",
  function_name: "weather",
  input: { messages: [{ role: "user", content: text }] }
})

export const extractDatapoint = (text: string, answer: string) => ({
  type: "json",
  function_name: "extract",
  input: { messages: [{ role: "user", content: text }] },
  output: { answer }
})
