/**
 * Inferences made through the Anthropic Messages and OpenAI Responses surfaces (issue 37) are
 * ordinary inferences: stored with their surface in `gateway::surface`, readable, taking
 * feedback by their id (the answer's `id`), and datapoints of a dataset built from them.
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForInference } from "../support/observability.ts"

const config = `
${observabilityToml()}
[metrics.thumbs_up]
type = "boolean"
level = "inference"
optimize = "max"

[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "dummy::hello"
weight = 1
`

describe("inferences of the Anthropic and Responses surfaces are ordinary inferences", () => {
  let database: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  const surfaces: ReadonlyArray<readonly [string, () => Promise<string>]> = [
    ["anthropic_messages", async () => {
      const client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused", maxRetries: 0 })
      const message = await client.messages.create({
        model: "gateway::function_name::assistant",
        max_tokens: 50,
        messages: [{ role: "user", content: "Hello" }]
      })
      return message.id
    }],
    ["openai_responses", async () => {
      const client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused", maxRetries: 0 })
      const response = await client.responses.create({ model: "gateway::function_name::assistant", input: "Hello" })
      return response.id
    }]
  ]

  it.each(surfaces)("%s: stored with its surface, takes feedback, becomes a datapoint", async (surface, create) => {
    const id = await create()
    const stored = await waitForInference(gateway, id)
    expect(stored).toMatchObject({ inference_id: id, function_name: "assistant", variant_name: "main" })
    expect(stored.tags["gateway::surface"]).toBe(surface)

    const feedback = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: id, value: true })
    expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)

    const dataset = `from-${surface.replaceAll("_", "-")}`
    const created = await gateway.post(`/v1/datasets/${dataset}/from_inferences`, { type: "inference_ids", inference_ids: [id] })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const listed = await gateway.post(`/v1/datasets/${dataset}/list_datapoints`, {})
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    expect(listed.body.datapoints.map((datapoint: any) => datapoint.source_inference_id)).toEqual([id])
  })
})
