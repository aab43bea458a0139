/**
 * A configuration exercising every behaviour of the `dummy` provider through functions,
 * shared by the dummy-*.test.ts suites: TensorZero's dummy models (`good`, `tool`, `json`, ...)
 * and the gateway's own (`hello`, `offered_tool`, `flaky`, `delay_500ms`, ...). Each model that
 * keeps state (`flaky`) has its own provider here, so suites and tests do not disturb one
 * another's call counts.
 */

export const temperatureSchema = {
  type: "object",
  properties: { location: { type: "string" }, units: { type: "string", enum: ["celsius", "fahrenheit"] } },
  required: ["location"],
  additionalProperties: false
}

export const answerSchema = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false
}

export const dummyConfigFiles: Record<string, string> = {
  "tools/get_temperature.json": JSON.stringify(temperatureSchema),
  "schemas/answer.json": JSON.stringify(answerSchema),
  "schemas/system.json": JSON.stringify({
    type: "object",
    properties: { assistant_name: { type: "string" } },
    required: ["assistant_name"],
    additionalProperties: false
  }),
  "schemas/user.json": JSON.stringify({
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 } },
    required: ["city", "days"]
  }),
  "templates/system.minijinja": "You are {{ assistant_name }}, a weather assistant.",
  "templates/user.minijinja": "What is the weather in {{ city }} for the next {{ days }} days?",
  "templates/assistant.minijinja": "Noted: {{ note }}",
  "templates/greeting.minijinja": "Greetings, {{ who }}!"
}

export const dummyConfig = `
[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"
strict = true

[functions.chat]
type = "chat"
# the gateway's own former default (other suites assert its text and usage)
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"

# TensorZero's default model
[functions.good]
type = "chat"
[functions.good.variants.good]
type = "chat_completion"
model = "dummy::good"

[functions.reasoning]
type = "chat"
[functions.reasoning.variants.reasoner]
type = "chat_completion"
model = "dummy::reasoner"

[functions.weather]
type = "chat"
tools = ["get_temperature"]
# the gateway's own offered_tool: a call of the configured tool, streamed whole (other suites assert it)
[functions.weather.variants.tool]
type = "chat_completion"
model = "dummy::offered_tool"
weight = 1
[functions.weather.variants.tensorzero_tool]
type = "chat_completion"
model = "dummy::tool"
weight = 0
[functions.weather.variants.bad_tool]
type = "chat_completion"
model = "dummy::bad_tool"
weight = 0
[functions.weather.variants.invalid_tool_arguments]
type = "chat_completion"
model = "dummy::invalid_tool_arguments"
weight = 0

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.json]
type = "chat_completion"
model = "dummy::json"
weight = 1
[functions.extract.variants.as_tool]
type = "chat_completion"
model = "dummy::json"
json_mode = "tool"
weight = 0

[functions.templated]
type = "chat"
schemas.system.path = "schemas/system.json"
schemas.user.path = "schemas/user.json"
[functions.templated.variants.echo_request_messages]
type = "chat_completion"
model = "dummy::echo_request_messages"
weight = 1
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
templates.assistant.path = "templates/assistant.minijinja"
templates.greeting.path = "templates/greeting.minijinja"
[functions.templated.variants.echo]
type = "chat_completion"
model = "dummy::echo"
weight = 0
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
templates.assistant.path = "templates/assistant.minijinja"
templates.greeting.path = "templates/greeting.minijinja"

[functions.extra_info]
type = "chat"
[functions.extra_info.variants.configured]
type = "chat_completion"
model = "dummy::echo_extra_info"
extra_body = [{ pointer = "/temperature", value = 0.5 }]
extra_headers = [{ name = "x-variant", value = "v" }]

[functions.failing]
type = "chat"
[functions.failing.variants.error]
type = "chat_completion"
model = "dummy::error"

[models.flaky_then_backup]
routing = ["flaky", "backup"]
[models.flaky_then_backup.providers.flaky]
type = "dummy"
model_name = "flaky"
[models.flaky_then_backup.providers.backup]
type = "dummy"
model_name = "reasoner"

[functions.flaky_with_backup]
type = "chat"
[functions.flaky_with_backup.variants.only]
type = "chat_completion"
model = "flaky_then_backup"

[models.flaky_alone]
routing = ["flaky"]
[models.flaky_alone.providers.flaky]
type = "dummy"
model_name = "flaky"

[functions.flaky_retried]
type = "chat"
[functions.flaky_retried.variants.only]
type = "chat_completion"
model = "flaky_alone"
retries = { num_retries = 1, max_delay_s = 0.05 }

[functions.slow_variant_timeout]
type = "chat"
[functions.slow_variant_timeout.variants.only]
type = "chat_completion"
model = "dummy::delay_500ms"
timeouts = { non_streaming = { total_ms = 100 }, streaming = { ttft_ms = 100 } }

[models.slow_provider]
routing = ["slow"]
[models.slow_provider.providers.slow]
type = "dummy"
model_name = "delay_500ms"
timeouts = { non_streaming = { total_ms = 100 }, streaming = { ttft_ms = 100 } }

[functions.slow_provider_timeout]
type = "chat"
[functions.slow_provider_timeout.variants.only]
type = "chat_completion"
model = "slow_provider"

[models.slow_model]
routing = ["slow"]
timeouts = { non_streaming = { total_ms = 100 }, streaming = { ttft_ms = 100 } }
[models.slow_model.providers.slow]
type = "dummy"
model_name = "delay_500ms"

[functions.slow_model_timeout]
type = "chat"
[functions.slow_model_timeout.variants.only]
type = "chat_completion"
model = "slow_model"

[functions.slow_without_timeout]
type = "chat"
[functions.slow_without_timeout.variants.only]
type = "chat_completion"
model = "dummy::delay_500ms"

[models.keyed]
routing = ["keyed"]
[models.keyed.providers.keyed]
type = "dummy"
model_name = "test_key"
api_key_location = "dynamic::key"

[functions.keyed]
type = "chat"
[functions.keyed.variants.only]
type = "chat_completion"
model = "keyed"

[functions.stream_error]
type = "chat"
[functions.stream_error.variants.only]
type = "chat_completion"
model = "dummy::stream_error"
`
