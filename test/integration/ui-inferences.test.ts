/**
 * `GET /v1/ui/inferences/:inference_id` and `GET /v1/ui/episodes/:episode_id` over HTTP, on the
 * UI's seeded gateway (the real command, the embedded database): an inference with its model
 * calls and feedback, an episode's inferences in order with theirs and its own; 400 for what is
 * not an id, 404 for an unknown one; with authentication on, 401 without a key and 403 for a key
 * without the admin role.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startUiGateway, type UiGateway, until } from "../support/uiGateway.ts"

/** a well-formed UUIDv7 that the gateway never issued */
const unknownId = "01900000-0000-7000-8000-000000000000"

describe("the UI's inference and episode routes", () => {
  let ui: UiGateway

  beforeAll(async () => {
    ui = await startUiGateway()
  }, 120_000)
  afterAll(async () => {
    await ui?.stop()
  })

  it("answers an inference with its model calls (raw request and response) and its feedback", async () => {
    const first = ui.seeded[0]
    // the seeded feedback is written asynchronously, after the seeding returned
    let response = await ui.gateway.get(`/v1/ui/inferences/${first.inferenceId}`)
    await until(async () => {
      response = await ui.gateway.get(`/v1/ui/inferences/${first.inferenceId}`)
      return response.status === 200 && response.body.feedback.length > 0
    })
    expect(response.status).toBe(200)
    const { inference, model_inferences, feedback, episode_feedback } = response.body
    expect(inference).toMatchObject({
      type: "chat",
      inference_id: first.inferenceId,
      episode_id: first.episodeId,
      function_name: "haiku",
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { topic: first.topic } }] }] },
      tags: { user: "alice", seed: "yes" }
    })
    expect(["echo", "fixed"]).toContain(inference.variant_name)
    expect(inference.output[0].type).toBe("text")
    expect(typeof inference.processing_time_ms).toBe("number")
    // the same shape as get_inferences answers without includes
    const listed = await ui.gateway.post("/v1/inferences/get_inferences", { ids: [first.inferenceId] })
    expect(inference).toEqual(listed.body.inferences[0])
    expect(model_inferences).toHaveLength(1)
    const call = model_inferences[0]
    expect(call.model_name).toBe(inference.variant_name === "echo" ? "dummy::streamed_echo" : "dummy::hello")
    expect(typeof call.raw_request).toBe("string")
    expect(typeof call.raw_response).toBe("string")
    expect(call.raw_request.length).toBeGreaterThan(0)
    expect(call).toMatchObject({ cached: false, cost: null })
    expect(Number.isInteger(call.input_tokens) && Number.isInteger(call.response_time_ms)).toBe(true)
    // seeded: haiku_rating true on the first
    expect(feedback).toEqual([expect.objectContaining({ metric_name: "haiku_rating", kind: "boolean", value: true, target_type: "inference", target_id: first.inferenceId })])
    expect(episode_feedback).toEqual([])
  })

  it("answers 400 for what is not an inference id and 404 for an unknown one", async () => {
    const bad = await ui.gateway.get("/v1/ui/inferences/not-an-id")
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain("inference_id")
    const unknown = await ui.gateway.get(`/v1/ui/inferences/${unknownId}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: `no inference ${unknownId} is stored` })
  })

  it("answers an episode's inferences oldest first, each with its own feedback, and the episode's feedback beside them", async () => {
    const { episodeId, inferenceId: firstId } = ui.seeded[1]
    const second = await ui.gateway.post("/inference", {
      function_name: "haiku",
      episode_id: episodeId,
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { topic: "a second step" } }] }] }
    })
    expect(second.status).toBe(200)
    await until(async () => (await ui.gateway.get(`/v1/ui/inferences/${second.body.inference_id}`)).status === 200)
    const episodeFeedback = await ui.gateway.post("/feedback", { metric_name: "task_success", episode_id: episodeId, value: true })
    const comment = await ui.gateway.post("/feedback", { metric_name: "comment", inference_id: second.body.inference_id, value: "the second step" })
    expect([episodeFeedback.status, comment.status]).toEqual([200, 200])
    let body: any
    await until(async () => {
      const response = await ui.gateway.get(`/v1/ui/episodes/${episodeId}`)
      body = response.body
      return response.status === 200 && body.feedback.length === 1 && body.inferences[1]?.feedback.length === 1
    })
    expect(body.episode_id).toBe(episodeId)
    expect(body.truncated).toBe(false)
    expect(body.inferences.map((inference: any) => inference.inference_id)).toEqual([firstId, second.body.inference_id])
    // the seeded inference 1 has no feedback; the episode's is not repeated on each inference
    expect(body.inferences[0].feedback).toEqual([])
    expect(body.inferences[1].feedback).toEqual([expect.objectContaining({ kind: "comment", value: "the second step", target_type: "inference" })])
    expect(body.feedback).toEqual([expect.objectContaining({ feedback_id: episodeFeedback.body.feedback_id, metric_name: "task_success", target_type: "episode", value: true })])
    // and the inference's page shows the episode's feedback apart
    const page = await ui.gateway.get(`/v1/ui/inferences/${second.body.inference_id}`)
    expect(page.body.feedback.map((f: any) => f.kind)).toEqual(["comment"])
    expect(page.body.episode_feedback.map((f: any) => f.metric_name)).toEqual(["task_success"])
  })

  it("answers 400 for what is not an episode id and 404 for an episode with no inference", async () => {
    const bad = await ui.gateway.get("/v1/ui/episodes/123")
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain("episode_id")
    const unknown = await ui.gateway.get(`/v1/ui/episodes/${unknownId}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: `no inference is stored in episode ${unknownId}` })
  })
})

describe("the UI's inference and episode routes with authentication on", () => {
  let ui: UiGateway

  beforeAll(async () => {
    ui = await startUiGateway({ auth: true, inferences: 2 })
  }, 120_000)
  afterAll(async () => {
    await ui?.stop()
  })

  it("need a key (401) with the admin role (403)", async () => {
    const { inferenceId, episodeId } = ui.seeded[0]
    const plainKey = await ui.keyCommand(["--create-api-key"])
    for (const path of [`/v1/ui/inferences/${inferenceId}`, `/v1/ui/episodes/${episodeId}`]) {
      const anonymous = await fetch(ui.url + path)
      expect(anonymous.status, path).toBe(401)
      const notAdmin = await fetch(ui.url + path, { headers: { authorization: `Bearer ${plainKey}` } })
      expect(notAdmin.status, path).toBe(403)
      expect(((await notAdmin.json()) as { error: string }).error).toContain("admin role")
      const admin = await fetch(ui.url + path, { headers: ui.headers })
      expect(admin.status, path).toBe(200)
    }
    // the public read stays open to the plain key
    const publicRead = await fetch(`${ui.url}/v1/inferences/get_inferences`, {
      method: "POST",
      headers: { authorization: `Bearer ${plainKey}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: [inferenceId] })
    })
    expect(publicRead.status).toBe(200)
  })
})
