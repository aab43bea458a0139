/**
 * Workspaces, the inference side's reads (issue 39), over HTTP on ClickHouse and on Postgres:
 * an inference of workspace team-a is invisible to team-b's keys on get_inferences and
 * list_inferences (a function, an episode, a tag filter, a metric filter), on the UI's
 * inference and episode routes, and as a feedback target (inference and episode: the answer
 * of an unknown id, while A's own feedback is stored). Stored responses (GET, DELETE,
 * input_items, previous_response_id) are seen in their workspace only, even by the same global
 * admin's key naming another workspace. Inferences made through the OpenAI and Anthropic
 * surfaces land in the caller's workspace too. With `share_across_api_keys = true` the cache serves
 * another key of A's workspace, never a key of team-b.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { type Answer, type ApiKey, call, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll } from "../support/observability.ts"

const config = `
${observabilityToml()}
[gateway.auth]
enabled = true

[gateway.cache]
share_across_api_keys = true

[metrics.good]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.episode_good]
type = "boolean"
level = "episode"
optimize = "max"

[functions.assistant]
type = "chat"
[functions.assistant.variants.dummy]
type = "chat_completion"
model = "dummy::hello"
`

const teamB = { "gateway-workspace": "team-b" }
const teamA = { "gateway-workspace": "team-a" }

/** the answer with `id` written as `<id>`: another workspace's object must answer as an unknown id does */
const shape = (answer: Answer, id: string) => ({ status: answer.status, body: JSON.parse(answer.text.split(id).join("<id>")) })

describe.each(backends)("workspaces: the inference side's reads on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway
  let memberA: ApiKey
  let secondA: ApiKey
  let adminA: ApiKey
  let memberB: ApiKey
  let adminB: ApiKey
  let global: ApiKey
  /** A's inference, its episode, and its tag */
  let inferenceId: string
  let episodeId: string
  const tag = `a-${backend}-${Date.now()}`

  const post = (key: ApiKey, route: string, body: unknown, headers: Record<string, string> = {}) => call(gateway, "POST", route, { key, body, headers })
  const ids = (answer: Answer): Array<string> => {
    expect(answer.status, answer.text).toBe(200)
    return answer.body.inferences.map((inference: any) => inference.inference_id)
  }
  const readable = (key: ApiKey, id: string, headers: Record<string, string> = {}) =>
    poll(`inference ${id} to be stored`, async () => {
      const found = await post(key, "/v1/inferences/get_inferences", { ids: [id], include_feedback: true, include_model_inferences: true }, headers)
      return found.body.inferences?.length === 1 ? found.body.inferences[0] : undefined
    })

  beforeAll(async () => {
    // keys live in a Postgres database: the analytics one on postgres, one of their own beside ClickHouse
    analytics = await freshDatabase(backend)
    relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
    memberA = await createKey(relational.url, ["--workspace", "team-a"])
    ;[secondA, adminA, memberB, adminB, global] = await Promise.all([
      createKey(relational.url, ["--workspace", "team-a"]),
      createKey(relational.url, ["--admin", "--workspace", "team-a"]),
      createKey(relational.url, ["--workspace", "team-b"]),
      createKey(relational.url, ["--admin", "--workspace", "team-b"]),
      createKey(relational.url, ["--admin", "--global"])
    ])
    gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url } })
    const made = await post(memberA, "/inference", { function_name: "assistant", input: { messages: [{ role: "user", content: "A's secret" }] }, tags: { team: tag } })
    expect(made.status, made.text).toBe(200)
    inferenceId = made.body.inference_id
    episodeId = made.body.episode_id
    await readable(memberA, inferenceId)
  })
  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
    if (relational !== analytics) await relational?.drop()
  })

  it("get_inferences and list_inferences of team-b never show A's inference", async () => {
    const byId = { ids: [inferenceId], include_feedback: true, include_model_inferences: true }
    expect(ids(await post(memberA, "/v1/inferences/get_inferences", byId))).toEqual([inferenceId])
    const queries = [
      { function_name: "assistant" },
      { episode_id: episodeId },
      { filters: { type: "tag", key: "team", value: tag } },
      { function_name: "assistant", filters: { type: "or", children: [{ type: "tag", key: "team", value: tag }, { type: "boolean_metric", metric_name: "good", value: false }] } },
      {}
    ]
    for (const query of queries) expect(ids(await post(memberA, "/v1/inferences/list_inferences", query))).toContain(inferenceId)
    for (const [key, headers] of [[memberB, {}], [adminB, {}], [global, teamB], [global, {}]] as const) {
      expect(ids(await post(key, "/v1/inferences/get_inferences", byId, headers))).toEqual([])
      for (const query of queries) expect(ids(await post(key, "/v1/inferences/list_inferences", query, headers))).not.toContain(inferenceId)
    }
    // the global admin naming team-a sees it
    expect(ids(await post(global, "/v1/inferences/get_inferences", byId, teamA))).toEqual([inferenceId])
  })

  it("the UI's inference and episode routes answer team-b's admin as for an unknown id", async () => {
    const unknown = uuidv7()
    for (const route of ["inferences", "episodes"]) {
      const id = route === "inferences" ? inferenceId : episodeId
      const own = await call(gateway, "GET", `/v1/ui/${route}/${id}`, { key: adminA })
      expect(own.status, own.text).toBe(200)
      const missing = shape(await call(gateway, "GET", `/v1/ui/${route}/${unknown}`, { key: adminB }), unknown)
      expect(missing.status).toBe(404)
      for (const [key, headers] of [[adminB, {}], [global, teamB]] as const) {
        expect(shape(await call(gateway, "GET", `/v1/ui/${route}/${id}`, { key, headers }), id)).toEqual(missing)
      }
    }
  })

  it("feedback from team-b on A's inference or episode answers as on an unknown id; A's feedback is stored", async () => {
    const unknown = uuidv7()
    for (const [metric, field, id] of [["good", "inference_id", inferenceId], ["episode_good", "episode_id", episodeId]] as const) {
      const missing = shape(await post(memberB, "/feedback", { metric_name: metric, [field]: unknown, value: true }), unknown)
      expect(missing.status).not.toBe(200)
      for (const [key, headers] of [[memberB, {}], [global, teamB]] as const) {
        expect(shape(await post(key, "/feedback", { metric_name: metric, [field]: id, value: true }, headers), id)).toEqual(missing)
      }
      const given = await post(memberA, "/feedback", { metric_name: metric, [field]: id, value: true })
      expect(given.status, given.text).toBe(200)
    }
    const feedback = await poll("A's feedback to be stored", async () => {
      const found = await readable(memberA, inferenceId)
      return found.feedback.length === 2 ? found.feedback : undefined
    })
    expect(feedback.map((f: any) => f.metric_name).sort()).toEqual(["episode_good", "good"])
    // a metric filter of team-b reads team-b's feedback only
    const good = { function_name: "assistant", filters: { type: "boolean_metric", metric_name: "good", value: true } }
    expect(ids(await post(memberA, "/v1/inferences/list_inferences", good))).toContain(inferenceId)
    expect(ids(await post(memberB, "/v1/inferences/list_inferences", good))).toEqual([])
  })

  it("stored responses are seen in their workspace only, even through the same key naming another", async () => {
    const responses = (method: "GET" | "POST" | "DELETE", route: string, headers: Record<string, string>, body?: unknown) =>
      call(gateway, method, `/openai/v1/responses${route}`, { key: global, headers, ...(body === undefined ? {} : { body }) })
    const created = await responses("POST", "", teamA, { model: "gateway::function_name::assistant", input: "remember this" })
    expect(created.status, created.text).toBe(200)
    const id: string = created.body.id
    const unknown = uuidv7()
    const own = await responses("GET", `/${id}`, teamA)
    expect(own.status, own.text).toBe(200)
    const ownItems = await responses("GET", `/${id}/input_items`, teamA)
    expect(ownItems.status, ownItems.text).toBe(200)

    for (const route of ["", "/input_items"]) {
      const missing = shape(await responses("GET", `/${unknown}${route}`, teamB), unknown)
      expect(missing.status).toBe(404)
      expect(shape(await responses("GET", `/${id}${route}`, teamB), id)).toEqual(missing)
    }
    const missingDelete = shape(await responses("DELETE", `/${unknown}`, teamB), unknown)
    expect(missingDelete.status).toBe(404)
    expect(shape(await responses("DELETE", `/${id}`, teamB), id)).toEqual(missingDelete)
    const continued = (previous: string) => responses("POST", "", teamB, { model: "gateway::function_name::assistant", input: "go on", previous_response_id: previous })
    const missingPrevious = shape(await continued(unknown), unknown)
    expect(missingPrevious.status).toBe(400)
    expect(shape(await continued(id), id)).toEqual(missingPrevious)
    // B's member too (its key is another anyway)
    expect((await call(gateway, "GET", `/openai/v1/responses/${id}`, { key: memberB })).status).toBe(404)

    // unchanged for A, from memory and then from the store
    expect((await responses("GET", `/${id}`, teamA)).body).toEqual(own.body)
    await readable(global, id, teamA)
    expect((await responses("GET", `/${id}`, teamA)).body).toEqual(own.body)
    expect((await responses("GET", `/${id}/input_items`, teamA)).body).toEqual(ownItems.body)
    expect(shape(await responses("DELETE", `/${id}`, teamB), id)).toEqual(missingDelete)
    expect((await responses("GET", `/${id}`, teamA)).status).toBe(200)
    expect((await responses("POST", "", teamA, { model: "gateway::function_name::assistant", input: "go on", previous_response_id: id })).status).toBe(200)
  })

  it("inferences made through the OpenAI and Anthropic surfaces are stored in the caller's workspace", async () => {
    const question = [{ role: "user", content: `surfaces ${backend}` }]
    const openai = await post(memberA, "/openai/v1/chat/completions", { model: "gateway::function_name::assistant", messages: question })
    expect(openai.status, openai.text).toBe(200)
    const anthropic = await post(memberA, "/anthropic/v1/messages", { model: "gateway::function_name::assistant", max_tokens: 50, messages: question })
    expect(anthropic.status, anthropic.text).toBe(200)
    for (const id of [openai.body.id, anthropic.body.id]) {
      await readable(memberA, id)
      expect(ids(await post(memberB, "/v1/inferences/get_inferences", { ids: [id] }))).toEqual([])
      expect(ids(await post(global, "/v1/inferences/get_inferences", { ids: [id] }, teamB))).toEqual([])
    }
  })

  it("share_across_api_keys shares the cache between the keys of one workspace, never with another", async () => {
    const input = { messages: [{ role: "user", content: `cache ${backend} ${Date.now()}` }] }
    const infer = async (key: ApiKey) => {
      const answer = await post(key, "/inference", { function_name: "assistant", input, cache_options: { enabled: "on" } })
      expect(answer.status, answer.text).toBe(200)
      // the model call's row, which holds the cache entry, is written
      const [call] = await poll(`the model call of ${answer.body.inference_id}`, async () => {
        const calls = (await readable(key, answer.body.inference_id)).model_inferences
        return calls.length === 1 ? calls : undefined
      })
      return call.cached as boolean
    }
    expect(await infer(memberA)).toBe(false)
    expect(await infer(secondA)).toBe(true)
    expect(await infer(memberB)).toBe(false)
    // B's own entry now serves B
    expect(await infer(adminB)).toBe(true)
  })
})
