/**
 * The HttpApi definition as the one wire contract (issue 11): `GET /openapi.json` describes
 * every route the gateway answers, each with its method; the document follows the schemas
 * (a field added to a request or response schema shows in it); and what the gateway answers,
 * plain, streamed or failed, conforms to the response schemas the document publishes.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DatapointIds, DatapointsResponse, DatasetsResponse, DeletedDatapoints, ListDatapointsRequest } from "../../src/api/datasets.ts"
import { FeedbackRequest, FeedbackResponse } from "../../src/api/feedback.ts"
import { GatewayApi } from "../../src/contract/gateway.ts"
import { ChatInferenceResponse, InferenceChunk, InferenceRequest, JsonInferenceResponse } from "../../src/api/inference.ts"
import { GetInferencesRequest, InferencesResponse, ListInferencesRequest } from "../../src/api/inferences.ts"
import { ChatCompletion, ChatCompletionChunk, ModelList, OpenAiErrorBody } from "../../src/api/openaiCompatible.ts"
import { ExperimentationResponse } from "../../src/api/experimentation.ts"
import { HealthResponse, StatusResponse } from "../../src/api/status.ts"
import { ErrorResponseBody } from "../../src/api/errors.ts"
import { CreateEpisodeResponse, CreateRunResponse, RunDetailsResponse, RunsResponse } from "../../src/api/workflowEvaluations.ts"
import { gatewayVersion } from "../../layers/http/status.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll } from "../support/observability.ts"

const config = `
${observabilityToml()}

[metrics.thumbs_up]
type = "boolean"
level = "inference"
optimize = "max"

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "get_temperature.json"

[functions.chat]
type = "chat"
[functions.chat.variants.only]
type = "chat_completion"
model = "dummy::reasoner"

[functions.weather]
type = "chat"
tools = ["get_temperature"]
[functions.weather.variants.tool]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.extract]
type = "json"
[functions.extract.variants.json]
type = "chat_completion"
model = "dummy::json"
`

const files = {
  "get_temperature.json": JSON.stringify({ type: "object", properties: { location: { type: "string" } }, required: ["location"] })
}

const input = { messages: [{ role: "user", content: "Hello" }] }

/** decodes `value` with `schema`, refusing any field the schema does not declare */
const conforms = (schema: Schema.Top, value: unknown) =>
  expect(() => Schema.decodeUnknownSync(schema as Schema.Codec<unknown>)(value, { onExcessProperty: "error" })).not.toThrow()

type Spec = Record<string, any>

/** the component a `$ref` names, or the schema itself */
const resolve = (spec: Spec, schema: Spec): Spec =>
  schema.$ref === undefined ? schema : spec.components.schemas[String(schema.$ref).split("/").pop()!]

/** the property names of a JSON schema that is an object (or a union of objects: all of them) */
const propertiesOf = (spec: Spec, schema: Spec): Array<string> => {
  const resolved = resolve(spec, schema)
  if (resolved.anyOf !== undefined) {
    return [...new Set<string>(resolved.anyOf.flatMap((member: Spec) => propertiesOf(spec, member)))]
  }
  return Object.keys(resolved.properties ?? {})
}

const requestSchema = (spec: Spec, path: string) => spec.paths[path].post.requestBody.content["application/json"].schema
const responseSchema = (spec: Spec, path: string, method = "post", status = "200") =>
  spec.paths[path][method].responses[status].content["application/json"].schema

/** the field names of a Struct schema */
const fieldsOf = (schema: { readonly fields: Record<string, unknown> }) => Object.keys(schema.fields).sort()

/** the routes of a document, as "METHOD /path" */
const routesOf = (spec: Spec): Array<string> =>
  Object.entries(spec.paths as Spec).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .sort()

/** routes the gateway does not serve (yet): the spec's later endpoints, and some it never will */
const otherPaths = [
  "/",
  "/v1/datasets/x/y",
  "/v1/datasets/x/datapoints/y",
  "/workflow_evaluation_run/x/episode/y",
  "/batch_inference/x/y",
  "/openai/v1/completions",
  "/v1/chat/completions",
  "/inference/x",
  "/docs/x"
]
const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const

describe("GET /openapi.json", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  let spec: Spec

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    const answer = await fetch(`${gateway.url}/openapi.json`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
    spec = (await answer.json()) as Spec
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("is an OpenAPI 3.1 document of this gateway, with no security when authentication is off", () => {
    expect(spec.openapi).toBe("3.1.0")
    expect(spec.info).toMatchObject({ title: "LLM Gateway", version: gatewayVersion })
    expect(spec.servers).toBeUndefined()
    expect(spec.components.securitySchemes ?? {}).toEqual({})
    for (const route of Object.values(spec.paths as Spec)) {
      for (const operation of Object.values(route as Spec)) {
        expect(operation.security).toEqual([])
        expect(Object.keys(operation.responses)).not.toContain("401")
      }
    }
  })

  it("lists every route the gateway answers, with its method, and no other", async () => {
    const documented = routesOf(spec)
    expect(documented).toEqual([
      "DELETE /openai/v1/responses/{id}",
      "DELETE /v1/budgets/{id}",
      "DELETE /v1/datasets/{dataset_name}",
      "DELETE /v1/datasets/{dataset_name}/datapoints",
      "DELETE /v1/optimization/gepa/{task_id}",
      "DELETE /v1/ui/session",
      "GET /anthropic/v1/models",
      "GET /anthropic/v1/models/{model_id}",
      "GET /batch_inference/{batch_id}",
      "GET /batch_inference/{batch_id}/inference/{inference_id}",
      "GET /docs",
      "GET /dynamic_evaluation_run/{run_id}",
      "GET /dynamic_evaluation_runs",
      "GET /health",
      "GET /metrics",
      "GET /openai/v1/models",
      "GET /openai/v1/responses/{id}",
      "GET /openai/v1/responses/{id}/input_items",
      "GET /openapi.json",
      "GET /status",
      "GET /v1/audit",
      "GET /v1/budgets",
      "GET /v1/datasets",
      "GET /v1/datasets/{dataset_name}/datapoints/export",
      "GET /v1/evaluations/runs",
      "GET /v1/evaluations/runs/{run_id}",
      "GET /v1/experimentation/{function_name}",
      "GET /v1/optimization/dicl/{task_id}",
      "GET /v1/optimization/gepa/{task_id}",
      "GET /v1/spend",
      "GET /v1/ui/api_keys",
      "GET /v1/ui/config",
      "GET /v1/ui/datasets/{dataset_name}/datapoints/{datapoint_id}/history",
      "GET /v1/ui/episodes/{episode_id}",
      "GET /v1/ui/inferences/{inference_id}",
      "GET /v1/ui/oidc/callback",
      "GET /v1/ui/oidc/start",
      "GET /v1/ui/optimization/gepa/{task_id}/export",
      "GET /v1/ui/overview",
      "GET /v1/ui/session",
      "GET /v1/ui/workspaces",
      "GET /workflow_evaluation_run/{run_id}",
      "GET /workflow_evaluation_runs",
      "PATCH /v1/datasets/{dataset_name}/datapoints",
      "PATCH /v1/datasets/{dataset_name}/datapoints/metadata",
      "POST /anthropic/v1/messages",
      "POST /anthropic/v1/messages/count_tokens",
      "POST /batch_inference",
      "POST /dynamic_evaluation_run",
      "POST /dynamic_evaluation_run/{run_id}/episode",
      "POST /feedback",
      "POST /inference",
      "POST /internal/config/reload",
      "POST /openai/v1/chat/completions",
      "POST /openai/v1/embeddings",
      "POST /openai/v1/responses",
      "POST /v1/datasets/{dataset_name}/datapoints",
      "POST /v1/datasets/{dataset_name}/datapoints/import",
      "POST /v1/datasets/{dataset_name}/from_inferences",
      "POST /v1/datasets/{dataset_name}/get_datapoints",
      "POST /v1/datasets/{dataset_name}/list_datapoints",
      "POST /v1/evaluations/run",
      "POST /v1/inferences/get_inferences",
      "POST /v1/inferences/list_inferences",
      "POST /v1/optimization/dicl",
      "POST /v1/optimization/gepa",
      "POST /v1/ui/api_keys",
      "POST /v1/ui/api_keys/{public_id}/disable",
      "POST /v1/ui/session",
      "POST /workflow_evaluation_run",
      "POST /workflow_evaluation_run/{run_id}/episode",
      "PUT /v1/budgets"
    ])
    // ask every method of every path, documented or not: a route answers unless the router says it has none
    const answered: Array<string> = []
    for (const path of [...Object.keys(spec.paths), ...otherPaths]) {
      // a path parameter (`{dataset_name}`) asked with a value
      const concrete = path.replace(/\{\w+\}/g, "x")
      for (const method of methods) {
        const response = await fetch(gateway.url + concrete, { method, ...(method === "GET" ? {} : { body: "{}" }) })
        const text = await response.text()
        const unrouted = response.status === 405 || (response.status === 404 && /no route for/.test(text))
        if (!unrouted) answered.push(`${method} ${path}`)
        if (response.status === 405) {
          // a known path: the answer names exactly the documented methods
          const allowed = Object.keys(spec.paths[path]).map((m) => m.toUpperCase()).join(", ")
          expect(text).toContain(`${concrete} accepts ${allowed}, not ${method}`)
        }
      }
    }
    expect(answered.sort()).toEqual(documented)
  })

  it("describes each body by its schema: the request and response fields are the schemas' fields", () => {
    expect(propertiesOf(spec, requestSchema(spec, "/inference")).sort()).toEqual(fieldsOf(InferenceRequest))
    expect(propertiesOf(spec, requestSchema(spec, "/feedback")).sort()).toEqual(fieldsOf(FeedbackRequest))
    expect(propertiesOf(spec, requestSchema(spec, "/v1/inferences/get_inferences")).sort()).toEqual(fieldsOf(GetInferencesRequest))
    expect(propertiesOf(spec, requestSchema(spec, "/v1/inferences/list_inferences")).sort()).toEqual(fieldsOf(ListInferencesRequest))
    expect(propertiesOf(spec, requestSchema(spec, "/v1/datasets/{dataset_name}/list_datapoints")).sort()).toEqual(fieldsOf(ListDatapointsRequest))
    expect(propertiesOf(spec, responseSchema(spec, "/feedback")).sort()).toEqual(fieldsOf(FeedbackResponse))
    expect(propertiesOf(spec, responseSchema(spec, "/inference")).sort()).toEqual(
      [...new Set([...fieldsOf(ChatInferenceResponse), ...fieldsOf(JsonInferenceResponse)])].sort()
    )
    expect(propertiesOf(spec, responseSchema(spec, "/openai/v1/chat/completions")).sort()).toEqual(fieldsOf(ChatCompletion))
    expect(propertiesOf(spec, responseSchema(spec, "/openai/v1/models", "get")).sort()).toEqual(fieldsOf(ModelList))
    expect(propertiesOf(spec, responseSchema(spec, "/status", "get")).sort()).toEqual(fieldsOf(StatusResponse))
    // streamed answers: the events' data, by schema
    const events = spec.paths["/inference"].post.responses["200"].content["text/event-stream"].schema
    expect(propertiesOf(spec, events.properties.data.contentSchema)).toContain("content")
    // errors, in each family's shape
    // `budget`: a budget's 429 only (docs/budgets.md); one error schema serves every status
    expect(propertiesOf(spec, responseSchema(spec, "/inference", "post", "400"))).toEqual(["error", "budget"])
    const openAiError = resolve(spec, responseSchema(spec, "/openai/v1/chat/completions", "post", "400"))
    expect(Object.keys(openAiError.properties.error.properties).sort()).toEqual(["code", "message", "param", "type"])
  })

  it("follows the schemas: a field added to a request or a response shows in the document", () => {
    const withFeedback = (request: Schema.Top, response: Schema.Top) =>
      HttpApi.make("gateway").add(
        HttpApiGroup.make("feedback").add(HttpApiEndpoint.post("feedback", "/feedback", { payload: request, success: response }))
      )
    const before = OpenApi.fromApi(withFeedback(FeedbackRequest, FeedbackResponse)) as Spec
    const after = OpenApi.fromApi(withFeedback(
      Schema.Struct({ ...FeedbackRequest.fields, note: Schema.String }),
      Schema.Struct({ ...FeedbackResponse.fields, stored_at: Schema.String })
    )) as Spec
    expect(propertiesOf(before, requestSchema(before, "/feedback"))).not.toContain("note")
    expect(propertiesOf(after, requestSchema(after, "/feedback"))).toContain("note")
    expect(propertiesOf(before, responseSchema(before, "/feedback"))).not.toContain("stored_at")
    expect(propertiesOf(after, responseSchema(after, "/feedback"))).toContain("stored_at")
    // and the gateway's own document is built from those same schemas
    expect(propertiesOf(spec, requestSchema(spec, "/feedback")).sort())
      .toEqual(propertiesOf(before, requestSchema(before, "/feedback")).sort())
    expect(OpenApi.fromApi(GatewayApi).paths["/feedback"]).toBeDefined()
  })

  describe("what the gateway answers conforms to the published schemas", () => {
    it("POST /inference: chat (text, thoughts, tool calls) and json, plain and streamed", async () => {
      for (const function_name of ["chat", "weather"]) {
        const answer = await gateway.post("/inference", { function_name, input, include_original_response: true })
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        conforms(ChatInferenceResponse, answer.body)
      }
      const json = await gateway.post("/inference", { function_name: "extract", input })
      expect(json.status).toBe(200)
      conforms(JsonInferenceResponse, json.body)
      for (const function_name of ["chat", "weather", "extract"]) {
        const streamed = await gateway.stream("/inference", { function_name, input, stream: true })
        expect(streamed.status).toBe(200)
        expect(streamed.events.at(-1)).toBe("[DONE]")
        for (const event of streamed.events.slice(0, -1)) conforms(InferenceChunk, event)
      }
    })

    it("POST /openai/v1/chat/completions and GET /openai/v1/models", async () => {
      for (const model of ["gateway::function_name::chat", "gateway::function_name::weather", "gateway::function_name::extract"]) {
        const answer = await gateway.post("/openai/v1/chat/completions", {
          model,
          messages: [{ role: "user", content: "Hello" }],
          "gateway::include_raw_response": true,
          "gateway::include_raw_usage": true
        })
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        conforms(ChatCompletion, answer.body)
        const streamed = await gateway.stream("/openai/v1/chat/completions", {
          model,
          messages: [{ role: "user", content: "Hello" }],
          stream: true,
          stream_options: { include_usage: true }
        })
        expect(streamed.events.at(-1)).toBe("[DONE]")
        for (const event of streamed.events.slice(0, -1)) conforms(ChatCompletionChunk, event)
      }
      conforms(ModelList, (await gateway.get("/openai/v1/models")).body)
    })

    it("POST /feedback and the stored inferences read back, with their feedback and model calls", async () => {
      const inference = await gateway.post("/inference", { function_name: "weather", input })
      const id = inference.body.inference_id
      const json = await gateway.post("/inference", { function_name: "extract", input })
      await poll("the inferences stored", async () => {
        const found = await gateway.post("/v1/inferences/get_inferences", { ids: [id, json.body.inference_id] })
        return found.body.inferences?.length === 2 ? found : undefined
      })
      const feedback = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: id, value: true })
      expect(feedback.status).toBe(200)
      conforms(FeedbackResponse, feedback.body)
      const read = await poll("the feedback stored", async () => {
        const found = await gateway.post("/v1/inferences/get_inferences", {
          ids: [id, json.body.inference_id],
          include_feedback: true,
          include_model_inferences: true
        })
        return found.body.inferences?.[0]?.feedback?.length === 1 ? found : undefined
      })
      conforms(InferencesResponse, read.body)
      const listed = await gateway.post("/v1/inferences/list_inferences", { include_feedback: true, include_model_inferences: true })
      expect(listed.body.inferences.length).toBeGreaterThan(2)
      conforms(InferencesResponse, listed.body)
    })

    it("the dataset routes: ids, datapoints (chat and json, live and stale), counts and datasets", async () => {
      const send = async (method: string, route: string, body?: unknown): Promise<any> => {
        const response = await fetch(gateway.url + route, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
        expect(response.status, route).toBe(200)
        return response.json()
      }
      const created = await send("POST", "/v1/datasets/conforming/datapoints", {
        datapoints: [
          {
            type: "chat",
            function_name: "weather",
            input,
            output: [{ type: "text", text: "hi" }, { type: "tool_call", id: "1", name: "get_temperature", arguments: { location: "Oslo" } }],
            tags: { a: "b" },
            tool_choice: { specific: "get_temperature" }
          },
          { type: "json", function_name: "extract", input, output: { answer: 1 }, output_schema: { type: "object" } }
        ]
      })
      conforms(DatapointIds, created)
      const [chatId, jsonId] = created.ids
      conforms(DatapointIds, await send("PATCH", "/v1/datasets/conforming/datapoints", { datapoints: [{ id: chatId, type: "chat", name: "n" }] }))
      conforms(DatapointIds, await send("PATCH", "/v1/datasets/conforming/datapoints/metadata", { datapoints: [{ id: jsonId, name: "j" }] }))
      const read = await send("POST", "/v1/datasets/conforming/get_datapoints", { ids: [chatId, jsonId] })
      expect(read.datapoints).toHaveLength(2)
      conforms(DatapointsResponse, read)
      conforms(DatapointsResponse, await send("POST", "/v1/datasets/conforming/list_datapoints", {}))
      conforms(DatasetsResponse, await send("GET", "/v1/datasets"))
      conforms(DeletedDatapoints, await send("DELETE", "/v1/datasets/conforming/datapoints", { ids: [jsonId] }))
      conforms(DeletedDatapoints, await send("DELETE", "/v1/datasets/conforming"))
    })

    it("the workflow evaluation routes: a run, an episode, the run read back with its metrics, and runs listed", async () => {
      const run = (await gateway.post("/workflow_evaluation_run", { variants: { chat: "only" }, project_name: "conforming", tags: { a: "b" } })).body
      conforms(CreateRunResponse, run)
      const episode = (await gateway.post(`/dynamic_evaluation_run/${run.run_id}/episode`, { task_name: "t" })).body
      conforms(CreateEpisodeResponse, episode)
      const inference = await gateway.post("/inference", { function_name: "chat", input, episode_id: episode.episode_id })
      expect(inference.status).toBe(200)
      expect((await gateway.post("/feedback", { metric_name: "comment", episode_id: episode.episode_id, value: "ok" })).status).toBe(200)
      const read = await poll("the run's feedback stored", async () => {
        const found = (await gateway.get(`/workflow_evaluation_run/${run.run_id}`)).body
        return found.metrics?.length === 1 ? found : undefined
      })
      conforms(RunDetailsResponse, read)
      conforms(RunsResponse, (await gateway.get("/workflow_evaluation_runs?project_name=conforming")).body)
    })

    it("GET /v1/experimentation/{function_name}", async () => {
      conforms(ExperimentationResponse, (await gateway.get("/v1/experimentation/chat")).body)
    })

    it("GET /status, GET /health, and the error bodies of both families", async () => {
      conforms(StatusResponse, (await gateway.get("/status")).body)
      conforms(HealthResponse, (await gateway.get("/health")).body)
      conforms(ErrorResponseBody, (await gateway.post("/inference", { input })).body)
      conforms(ErrorResponseBody, (await gateway.get("/nowhere")).body)
      conforms(OpenAiErrorBody, (await gateway.post("/openai/v1/chat/completions", { model: "nope" })).body)
    })
  })
})
