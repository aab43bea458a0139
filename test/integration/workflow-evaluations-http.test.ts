/**
 * Workflow evaluation runs over real HTTP (spec 2.7, 4.6), against a real gateway on
 * ClickHouse and on Postgres alike, under `/workflow_evaluation_run...` and
 * `/dynamic_evaluation_run...`: runs and episodes created (unknown functions, variants and runs
 * refused), inferences of a run episode running the pinned variant with the run's and the
 * episode's tags (on /inference, streamed, and on the OpenAI-compatible route), a conflicting
 * `variant_name` refused, feedback on episodes and inferences summed up per metric when the run
 * is read back, runs listed; the 503 of a gateway without observability, and the key a gateway
 * with authentication asks for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { call, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll, userInput, uuidV7Pattern, waitForInference, waitForInferences } from "../support/observability.ts"

const runIdTag = "gateway::workflow_evaluation_run_id"

// `pinned` and `json_pinned` have weight 0: sampling never picks them, only a run's pin does
const config = `
${observabilityToml()}

[metrics.solved]
type = "boolean"
level = "episode"
optimize = "max"

[metrics.score]
type = "float"
level = "inference"
optimize = "max"

[metrics.thumbs_up]
type = "boolean"
level = "inference"
optimize = "max"

[functions.assistant]
type = "chat"
[functions.assistant.variants.sampled]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.assistant.variants.pinned]
type = "chat_completion"
model = "dummy::hello"
weight = 0

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.json]
type = "chat_completion"
model = "dummy::json"
weight = 1
[functions.extract.variants.json_pinned]
type = "chat_completion"
model = "dummy::json"
weight = 0
`

const files = {
  "schemas/answer.json": JSON.stringify({
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false
  })
}

/** the two names of the routes, which behave alike */
const families = ["workflow", "dynamic"] as const
type Family = typeof families[number]

interface Answer {
  readonly status: number
  readonly body: any
}

const expectStatus = (answer: Answer, status: number) => expect(answer.status, JSON.stringify(answer.body)).toBe(status)

describe.each(backends)("workflow evaluation runs over HTTP on %s", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway

  const createRun = (family: Family, body: unknown) => gateway.post(`/${family}_evaluation_run`, body)
  const createEpisode = (family: Family, runId: string, body: unknown) =>
    gateway.post(`/${family}_evaluation_run/${encodeURIComponent(runId)}/episode`, body)
  const getRun = (family: Family, runId: string, query = "") => gateway.get(`/${family}_evaluation_run/${encodeURIComponent(runId)}${query}`)
  const listRuns = (family: Family, query: string) => gateway.get(`/${family}_evaluation_runs?${query}`)

  /** a new run, expecting a 200; its id */
  const newRun = async (family: Family, body: Record<string, unknown>): Promise<string> => {
    const answer = await createRun(family, body)
    expectStatus(answer, 200)
    expect(Object.keys(answer.body)).toEqual(["run_id"])
    expect(answer.body.run_id).toMatch(uuidV7Pattern)
    return answer.body.run_id
  }
  const newEpisode = async (family: Family, runId: string, body: Record<string, unknown> = {}): Promise<string> => {
    const answer = await createEpisode(family, runId, body)
    expectStatus(answer, 200)
    expect(Object.keys(answer.body)).toEqual(["episode_id"])
    expect(answer.body.episode_id).toMatch(uuidV7Pattern)
    return answer.body.episode_id
  }
  const infer = async (body: Record<string, unknown>) => {
    const answer = await gateway.post("/inference", body)
    expectStatus(answer, 200)
    return answer.body
  }
  const sendFeedback = async (body: Record<string, unknown>) => {
    const answer = await gateway.post("/feedback", body)
    expectStatus(answer, 200)
    return answer.body.feedback_id as string
  }

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it.each(families)("/%s_evaluation_run: inferences of an episode run the pinned variants and carry the run's and the episode's tags", async (family) => {
    const runId = await newRun(family, {
      variants: { assistant: "pinned", extract: "json_pinned" },
      project_name: `pinning ${family}`,
      display_name: "first try",
      tags: { team: "red", shared: "run", level: "run" }
    })
    const episodeId = await newEpisode(family, runId, { task_name: "task one", tags: { step: "1", shared: "episode", level: "episode" } })

    const chat = await infer({
      function_name: "assistant",
      input: userInput("hi"),
      episode_id: episodeId,
      tags: { level: "request", mine: "yes" }
    })
    expect(chat.variant_name).toBe("pinned")
    expect(chat.episode_id).toBe(episodeId)
    const json = await infer({ function_name: "extract", input: userInput("hi"), episode_id: episodeId })
    expect(json.variant_name).toBe("json_pinned")
    // naming the pinned variant is fine
    const named = await infer({ function_name: "assistant", input: userInput("hi"), episode_id: episodeId, variant_name: "pinned" })
    expect(named.variant_name).toBe("pinned")
    const streamed = await gateway.stream("/inference", { function_name: "assistant", input: userInput("hi"), episode_id: episodeId, stream: true })
    expect(streamed.status, streamed.raw).toBe(200)
    expect(streamed.events[0]).toMatchObject({ episode_id: episodeId, variant_name: "pinned" })
    const openAi = await gateway.post("/openai/v1/chat/completions", {
      model: "gateway::function_name::assistant",
      messages: [{ role: "user", content: "hi" }],
      "gateway::episode_id": episodeId,
      "gateway::tags": { via: "openai" }
    })
    expectStatus(openAi, 200)
    expect(openAi.body.model).toBe("gateway::function_name::assistant::variant_name::pinned")

    const [storedChat, storedJson, storedNamed, storedStreamed, storedOpenAi] = await waitForInferences(gateway, [
      chat.inference_id,
      json.inference_id,
      named.inference_id,
      streamed.events[0].inference_id,
      openAi.body.id
    ])
    expect(storedChat).toMatchObject({ variant_name: "pinned", episode_id: episodeId })
    expect(storedChat.tags).toEqual({ team: "red", step: "1", shared: "episode", level: "request", mine: "yes", [runIdTag]: runId })
    expect(storedJson).toMatchObject({ variant_name: "json_pinned", episode_id: episodeId })
    expect(storedJson.tags).toEqual({ team: "red", step: "1", shared: "episode", level: "episode", [runIdTag]: runId })
    for (const stored of [storedNamed, storedStreamed]) {
      expect(stored.variant_name).toBe("pinned")
      expect(stored.tags[runIdTag]).toBe(runId)
    }
    expect(storedOpenAi).toMatchObject({ variant_name: "pinned", episode_id: episodeId })
    expect(storedOpenAi.tags).toMatchObject({ via: "openai", team: "red", step: "1", [runIdTag]: runId })

    // the run read back under both names: its episode with its task name
    for (const name of families) {
      const read = await getRun(name, runId)
      expectStatus(read, 200)
      expect(read.body.run).toEqual({
        run_id: runId,
        variants: { assistant: "pinned", extract: "json_pinned" },
        project_name: `pinning ${family}`,
        display_name: "first try",
        tags: { team: "red", shared: "run", level: "run" },
        timestamp: expect.any(String)
      })
      expect(read.body.episodes).toEqual([{
        episode_id: episodeId,
        run_id: runId,
        task_name: "task one",
        tags: { step: "1", shared: "episode", level: "episode" },
        timestamp: expect.any(String)
      }])
    }
  })

  it("leaves inferences outside runs alone: sampled variants, their own tags only", async () => {
    const runId = await newRun("workflow", { variants: { assistant: "pinned" } })
    const episodeId = await newEpisode("workflow", runId)
    // a run that does not pin the function: sampled as usual, still tagged
    const unpinnedRun = await newRun("workflow", { variants: { extract: "json_pinned" } })
    const unpinnedEpisode = await newEpisode("workflow", unpinnedRun)

    const ordinary = await infer({ function_name: "assistant", input: userInput("hi"), tags: { mine: "1" } })
    expect(ordinary.variant_name).toBe("sampled")
    const unknownEpisode = await infer({ function_name: "assistant", input: userInput("hi"), episode_id: uuidv7() })
    expect(unknownEpisode.variant_name).toBe("sampled")
    const unpinned = await infer({ function_name: "assistant", input: userInput("hi"), episode_id: unpinnedEpisode })
    expect(unpinned.variant_name).toBe("sampled")
    // a run episode's id is no run's id: a run id used as an episode runs as an ordinary episode
    const runAsEpisode = await infer({ function_name: "assistant", input: userInput("hi"), episode_id: runId })
    expect(runAsEpisode.variant_name).toBe("sampled")
    // a model has no variants to pin, but the inference is the run's
    const model = await infer({ model_name: "dummy::hello", input: userInput("hi"), episode_id: episodeId })

    const [storedOrdinary, storedUnknown, storedUnpinned, storedModel] = await waitForInferences(gateway, [
      ordinary.inference_id,
      unknownEpisode.inference_id,
      unpinned.inference_id,
      model.inference_id
    ])
    expect(storedOrdinary.tags).toEqual({ mine: "1" })
    expect(storedUnknown.tags).toEqual({})
    expect(storedUnpinned.tags).toEqual({ [runIdTag]: unpinnedRun })
    expect(storedModel.tags).toEqual({ [runIdTag]: runId })
  })

  it.each(families)("/%s_evaluation_run: a request naming another variant than the pinned one is a 400 saying so", async (family) => {
    const runId = await newRun(family, { variants: { assistant: "pinned" } })
    const episodeId = await newEpisode(family, runId)
    const answer = await gateway.post("/inference", { function_name: "assistant", input: userInput("hi"), episode_id: episodeId, variant_name: "sampled" })
    expectStatus(answer, 400)
    expect(answer.body.error).toContain("variant_name")
    expect(answer.body.error).toContain("\"sampled\"")
    expect(answer.body.error).toContain("\"pinned\"")
    const openAi = await gateway.post("/openai/v1/chat/completions", {
      model: "gateway::function_name::assistant",
      messages: [{ role: "user", content: "hi" }],
      "gateway::episode_id": episodeId,
      "gateway::variant_name": "sampled"
    })
    expectStatus(openAi, 400)
    expect(openAi.body.error.message).toContain("\"pinned\"")
  })

  it.each(families)("/%s_evaluation_run: refuses unknown functions, variants and runs, reserved tags and malformed bodies", async (family) => {
    const unknownFunction = await createRun(family, { variants: { assistant: "pinned", nowhere: "x" } })
    expectStatus(unknownFunction, 404)
    expect(unknownFunction.body.error).toContain("\"nowhere\"")
    const unknownVariant = await createRun(family, { variants: { assistant: "missing" } })
    expectStatus(unknownVariant, 404)
    expect(unknownVariant.body.error).toContain("\"missing\"")
    expect(unknownVariant.body.error).toContain("\"assistant\"")
    const reserved = await createRun(family, { variants: {}, tags: { [runIdTag]: "forged" } })
    expectStatus(reserved, 400)
    expect(reserved.body.error).toContain("reserved")
    for (const body of [{}, { variants: "assistant" }, { variants: {}, extra: 1 }]) {
      expectStatus(await createRun(family, body), 400)
    }

    const unknownRun = uuidv7()
    for (const runId of [unknownRun, "not-a-uuid"]) {
      const episode = await createEpisode(family, runId, { task_name: "t" })
      expectStatus(episode, 404)
      expect(episode.body.error).toContain(runId)
      expectStatus(await getRun(family, runId), 404)
    }
    const runId = await newRun(family, { variants: {} })
    const reservedEpisode = await createEpisode(family, runId, { tags: { "gateway::x": "y" } })
    expectStatus(reservedEpisode, 400)
    expect(reservedEpisode.body.error).toContain("gateway::x")
    expectStatus(await createEpisode(family, runId, { task_name: 3 }), 400)
    // optional fields may be null
    await newEpisode(family, runId, { task_name: null, tags: null })
    await newRun(family, { variants: {}, project_name: null, display_name: null, tags: null })
    for (const query of ["?limit=0", "?limit=x", "?offset=-1", "?limit=1001"]) expectStatus(await getRun(family, runId, query), 400)
    expectStatus(await listRuns(family, "limit=0"), 400)
  })

  it.each(families)("/%s_evaluation_run: feedback on episodes and their inferences appears in the run's metrics, counted and averaged", async (family) => {
    const runId = await newRun(family, { variants: { assistant: "pinned" } })
    const first = await newEpisode(family, runId, { task_name: "first" })
    const second = await newEpisode(family, runId, { task_name: "second" })
    // an episode without inferences takes episode-level feedback as well
    const idle = await newEpisode(family, runId, { task_name: "idle" })
    const elsewhere = await newEpisode(family, await newRun(family, { variants: {} }))

    const a = await infer({ function_name: "assistant", input: userInput("a"), episode_id: first })
    const b = await infer({ function_name: "assistant", input: userInput("b"), episode_id: first })
    const c = await infer({ function_name: "extract", input: userInput("c"), episode_id: second })
    const outside = await infer({ function_name: "assistant", input: userInput("d"), episode_id: elsewhere })
    await waitForInferences(gateway, [a.inference_id, b.inference_id, c.inference_id, outside.inference_id])

    await sendFeedback({ metric_name: "score", inference_id: a.inference_id, value: 0.5 })
    await sendFeedback({ metric_name: "score", inference_id: b.inference_id, value: 1 })
    await sendFeedback({ metric_name: "score", inference_id: c.inference_id, value: 0 })
    await sendFeedback({ metric_name: "thumbs_up", inference_id: a.inference_id, value: true })
    await sendFeedback({ metric_name: "solved", episode_id: first, value: true })
    await sendFeedback({ metric_name: "solved", episode_id: second, value: false })
    await sendFeedback({ metric_name: "solved", episode_id: idle, value: true })
    await sendFeedback({ metric_name: "comment", episode_id: first, value: "good" })
    await sendFeedback({ metric_name: "comment", inference_id: c.inference_id, value: "meh" })
    await sendFeedback({ metric_name: "demonstration", inference_id: a.inference_id, value: "the ideal answer" })
    // not the run's
    await sendFeedback({ metric_name: "score", inference_id: outside.inference_id, value: 100 })
    await sendFeedback({ metric_name: "solved", episode_id: elsewhere, value: false })

    let last: unknown
    const read = await poll("the run's feedback to be stored", async () => {
      const answer = await getRun(family, runId)
      expectStatus(answer, 200)
      last = answer.body.metrics
      const total = answer.body.metrics.reduce((sum: number, metric: { count: number }) => sum + metric.count, 0)
      return total === 10 ? answer.body : undefined
    }, { last: () => last })
    expect(read.metrics).toEqual([
      { metric_name: "comment", count: 2, mean: null },
      { metric_name: "demonstration", count: 1, mean: null },
      { metric_name: "score", count: 3, mean: 0.5 },
      { metric_name: "solved", count: 3, mean: expect.closeTo(2 / 3, 12) },
      { metric_name: "thumbs_up", count: 1, mean: 1 }
    ])
    expect(read.episodes.map((episode: { task_name: string }) => episode.task_name)).toEqual(["first", "second", "idle"])
    expect((await getRun(family, runId, "?limit=1&offset=1")).body.episodes.map((episode: { episode_id: string }) => episode.episode_id))
      .toEqual([second])
  })

  it.each(families)("/%s_evaluation_runs: lists a project's runs newest first, a page at a time", async (family) => {
    const project = `listed ${family} ${uuidv7().slice(-8)}`
    const ids: Array<string> = []
    for (const display of ["one", "two", "three"]) ids.push(await newRun(family, { variants: {}, project_name: project, display_name: display }))
    await newRun(family, { variants: {}, project_name: `${project} other` })

    const listed = await listRuns(family, `project_name=${encodeURIComponent(project)}`)
    expectStatus(listed, 200)
    expect(listed.body.runs.map((run: { run_id: string }) => run.run_id)).toEqual([...ids].reverse())
    expect(listed.body.runs[0]).toEqual({
      run_id: ids[2],
      variants: {},
      project_name: project,
      display_name: "three",
      tags: {},
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
    const paged = await listRuns(family, `project_name=${encodeURIComponent(project)}&limit=1&offset=1`)
    expect(paged.body.runs.map((run: { run_id: string }) => run.run_id)).toEqual([ids[1]])
    const all = await listRuns(family, "limit=1000")
    expect(all.body.runs.map((run: { run_id: string }) => run.run_id)).toEqual(expect.arrayContaining(ids))
  })

  it("keeps runs across a restart of the gateway, and pins the inferences of their episodes", async () => {
    const runId = await newRun("workflow", { variants: { assistant: "pinned" }, tags: { kept: "yes" } })
    const episodeId = await newEpisode("workflow", runId, { task_name: "kept" })
    expect(await gateway.stop()).toBe(0)
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    // the new process knows the episode from the database only
    const answer = await infer({ function_name: "assistant", input: userInput("hi"), episode_id: episodeId })
    expect(answer.variant_name).toBe("pinned")
    const stored = await waitForInference(gateway, answer.inference_id)
    expect(stored.tags).toEqual({ kept: "yes", [runIdTag]: runId })
    expect((await getRun("dynamic", runId)).body.episodes.map((episode: { task_name: string }) => episode.task_name)).toEqual(["kept"])
  })
})

describe("workflow evaluation runs without observability", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: undefined } })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("answers 503 on every route, naming what would turn it on; inferences run as usual", async () => {
    const runId = uuidv7()
    for (const family of families) {
      for (const answer of [
        await gateway.post(`/${family}_evaluation_run`, { variants: { assistant: "pinned" } }),
        await gateway.post(`/${family}_evaluation_run/${runId}/episode`, {}),
        await gateway.get(`/${family}_evaluation_run/${runId}`),
        await gateway.get(`/${family}_evaluation_runs`)
      ]) {
        expectStatus(answer, 503)
        expect(answer.body.error).toContain("GATEWAY_ANALYTICS_DB_URL")
      }
    }
    // an id that carries the mark of run episodes: nothing to look up, nothing pinned
    const marked = `${uuidv7().slice(0, 32)}7015`
    const answer = await gateway.post("/inference", { function_name: "assistant", input: userInput("hi"), episode_id: marked })
    expectStatus(answer, 200)
    expect(answer.body.variant_name).toBe("sampled")
  })
})

describe("workflow evaluation runs with authentication on", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `${config}\n[gateway.auth]\nenabled = true\n`,
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("needs an API key on the run routes", async () => {
    for (const family of families) {
      expect((await call(gateway, "POST", `/${family}_evaluation_run`, { body: { variants: {} } })).status).toBe(401)
      expect((await call(gateway, "GET", `/${family}_evaluation_runs`)).status).toBe(401)
    }
    const key = await createKey(database.url)
    const created = await call(gateway, "POST", "/workflow_evaluation_run", { body: { variants: { assistant: "pinned" } }, key })
    expect(created.status, created.text).toBe(200)
    const runId = created.body.run_id
    expect((await call(gateway, "POST", `/dynamic_evaluation_run/${runId}/episode`, { body: {} })).status).toBe(401)
    const episode = await call(gateway, "POST", `/dynamic_evaluation_run/${runId}/episode`, { body: { task_name: "t" }, key })
    expect(episode.status, episode.text).toBe(200)
    const read = await call(gateway, "GET", `/workflow_evaluation_run/${runId}`, { key })
    expect(read.status, read.text).toBe(200)
    expect(read.body.episodes).toHaveLength(1)
  })
})
