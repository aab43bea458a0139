import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dummyHelloText, dummyHelloUsage } from "../../src/providers/dummy/index.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

describe("POST /inference on the dummy provider", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({
      config: `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::hello"
`
    })
  })
  afterAll(async () => {
    await gateway.stop()
  })

  it("answers a chat function with the model's text, ids and usage", async () => {
    const response = await gateway.post("/inference", {
      function_name: "greet",
      input: { messages: [{ role: "user", content: "hi" }] }
    })
    expect(response.status).toBe(200)
    expect(response.body.variant_name).toBe("only")
    expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
    expect(response.body.usage).toEqual(dummyHelloUsage)
    expect(response.body.inference_id).toMatch(/^[0-9a-f-]{36}$/)
  })
})
