// The benchmark's scenario, shared by `npm run bench` (bench/run.ts) and the A/B comparison
// (bench/compare.ts): the gateway's configuration in front of the fake upstream, and the
// request bodies of each surface (with what the gateway sends upstream for them, so the
// reference proxy carries the same bytes).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const gatewayConfig = (upstream: string) => `
[functions.bench]
type = "chat"
schemas.system.path = "system_schema.json"
schemas.user.path = "user_schema.json"

[functions.bench.variants.main]
type = "chat_completion"
model = "bench_model"
templates.system.path = "system.minijinja"
templates.user.path = "user.minijinja"
temperature = 0.2
max_tokens = 100

# the same function over the upstream's paced stream (64 chunks 5 ms apart)
[functions.bench_paced]
type = "chat"
schemas.system.path = "system_schema.json"
schemas.user.path = "user_schema.json"

[functions.bench_paced.variants.main]
type = "chat_completion"
model = "bench_paced_model"
templates.system.path = "system.minijinja"
templates.user.path = "user.minijinja"
temperature = 0.2
max_tokens = 100

[models.bench_paced_model]
routing = ["upstream"]

[models.bench_paced_model.providers.upstream]
type = "openai"
model_name = "bench-model-paced"
api_base = "${upstream}/v1/"
api_key_location = "none"

[models.bench_model]
routing = ["upstream"]

[models.bench_model.providers.upstream]
type = "openai"
model_name = "bench-model"
api_base = "${upstream}/v1/"
api_key_location = "none"
`

/** the gateway's configuration folder; `gatewaySection` goes first in its config.toml */
export const writeGatewayFiles = (upstream: string, gatewaySection = ""): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-bench-"))
  const objectSchema = (property: string) =>
    JSON.stringify({ type: "object", properties: { [property]: { type: "string" } }, required: [property] })
  fs.writeFileSync(path.join(dir, "config.toml"), gatewaySection + gatewayConfig(upstream))
  fs.writeFileSync(path.join(dir, "system_schema.json"), objectSchema("assistant_name"))
  fs.writeFileSync(path.join(dir, "user_schema.json"), objectSchema("topic"))
  fs.writeFileSync(path.join(dir, "system.minijinja"), "You are {{ assistant_name }}, a concise assistant.")
  fs.writeFileSync(path.join(dir, "user.minijinja"), "Tell me one fact about {{ topic }}.")
  return dir
}

export const gatewayBody = JSON.stringify({
  function_name: "bench",
  input: {
    system: { assistant_name: "Bench" },
    messages: [{ role: "user", content: [{ type: "text", arguments: { topic: "latency" } }] }]
  }
})
// the same call through the OpenAI-compatible route
export const openAiRouteBody = JSON.stringify({
  model: "gateway::function_name::bench",
  messages: [
    { role: "system", content: [{ type: "text", "gateway::arguments": { assistant_name: "Bench" } }] },
    { role: "user", content: [{ type: "text", "gateway::arguments": { topic: "latency" } }] }
  ]
})
// what the gateway sends upstream for that request, so the proxy carries the same bytes
export const upstreamBody = JSON.stringify({
  model: "bench-model",
  messages: [
    { role: "system", content: "You are Bench, a concise assistant." },
    { role: "user", content: "Tell me one fact about latency." }
  ],
  temperature: 0.2,
  max_completion_tokens: 100
})

// the streamed requests: on /inference and the OpenAI route, the same calls with `stream: true`
// (`bench_paced` being the function over the paced stream); to the upstream, what the gateway
// sends it for them
export const streamedGatewayBody = (functionName: string) => JSON.stringify({ ...JSON.parse(gatewayBody), function_name: functionName, stream: true })
export const streamedOpenAiRouteBody = (functionName: string) =>
  JSON.stringify({ ...JSON.parse(openAiRouteBody), model: `gateway::function_name::${functionName}`, stream: true })
export const streamedUpstreamBody = (model: string) =>
  JSON.stringify({ ...JSON.parse(upstreamBody), model, stream: true, stream_options: { include_usage: true } })

// The same plain call (a configured model, no templates: Anthropic's and the Responses API's
// bodies carry no template arguments) on the three chat-style routes, to set their costs side
// by side: the chat route, Anthropic's Messages, OpenAI's Responses
const plainQuestion = "Tell me one fact about latency."
export const plainRoutes = [
  {
    name: "OpenAI route, plain",
    path: "/openai/v1/chat/completions",
    body: (model: string, stream: boolean) =>
      JSON.stringify({ model: `gateway::model_name::${model}`, max_tokens: 100, messages: [{ role: "user", content: plainQuestion }], ...(stream ? { stream } : {}) })
  },
  {
    name: "Anthropic route",
    path: "/anthropic/v1/messages",
    body: (model: string, stream: boolean) =>
      JSON.stringify({ model: `gateway::model_name::${model}`, max_tokens: 100, messages: [{ role: "user", content: plainQuestion }], ...(stream ? { stream } : {}) })
  },
  {
    name: "Responses route",
    path: "/openai/v1/responses",
    body: (model: string, stream: boolean) =>
      JSON.stringify({ model: `gateway::model_name::${model}`, max_output_tokens: 100, input: plainQuestion, ...(stream ? { stream } : {}) })
  }
] as const
