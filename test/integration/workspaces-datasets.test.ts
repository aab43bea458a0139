/**
 * Workspaces, datasets and evaluations (issue 39), over HTTP on ClickHouse and on Postgres: two
 * workspaces each have a dataset `train` holding their own datapoints. Listing datasets, get,
 * list (and search), update, metadata, delete, history, delete dataset, export, import and
 * from_inferences stay in the caller's workspace; A's datapoint through B's key answers as an
 * unknown id, and A's is unchanged afterwards. An evaluation run over `train` from B (over HTTP,
 * or `gateway evaluate --workspace team-b`) runs B's datapoints only, a dataset only A has is
 * "no such dataset" for B, and runs are invisible across workspaces. Workflow evaluation runs
 * and episodes likewise: B cannot read, list or add an episode to A's run, and an inference of
 * B naming A's run episode is an ordinary one.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { type Answer, type ApiKey, call, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll } from "../support/observability.ts"

// `pinned` has weight 0: sampling never picks it, only a workflow run's pin does
const config = `
${observabilityToml()}
[gateway.auth]
enabled = true

[functions.plain]
type = "chat"
[functions.plain.variants.only]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.plain.variants.pinned]
type = "chat_completion"
model = "dummy::hello"
weight = 0
[functions.plain.evaluators.exact]
type = "exact_match"
`

/** a datapoint of `plain` whose user message is `text` */
const datapoint = (text: string) => ({
  type: "chat",
  function_name: "plain",
  input: { messages: [{ role: "user", content: text }] },
  output: [{ type: "text", text: `answer to ${text}` }]
})

/** the answer with `id` written as `<id>`: another workspace's object must answer as an unknown id does */
const shape = (answer: Answer, id: string) => ({ status: answer.status, body: JSON.parse(answer.text.split(id).join("<id>")) })

const userTexts = (datapoints: ReadonlyArray<any>) => datapoints.map((d) => d.input.messages[0].content[0]?.text ?? d.input.messages[0].content).sort()

/** the events of a streamed evaluation run, or its JSON refusal */
const runEvents = (answer: Answer): Array<any> =>
  answer.text.split("\n\n").filter((block) => block !== "").map((block) => JSON.parse(block.split("\n")[1].slice("data: ".length)))

describe.each(backends)("workspaces: datasets and evaluations on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway
  let keyA: ApiKey
  let keyB: ApiKey
  /** A's and B's datapoints in their own `train` */
  let trainA: Array<string>
  let trainB: Array<string>
  const train = `/v1/datasets/train`

  const post = (key: ApiKey, route: string, body: unknown) => call(gateway, "POST", route, { key, body })
  const ok = (answer: Answer) => {
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }
  const listTexts = async (key: ApiKey, dataset = "train", query: Record<string, unknown> = {}) =>
    userTexts(ok(await post(key, `/v1/datasets/${dataset}/list_datapoints`, query)).datapoints)
  const raw = async (key: ApiKey, method: string, route: string, body?: string) => {
    const response = await fetch(gateway.url + route, {
      method,
      headers: { authorization: `Bearer ${key.key}`, ...(body === undefined ? {} : { "content-type": "application/x-ndjson" }) },
      body
    })
    return { status: response.status, text: await response.text() }
  }

  beforeAll(async () => {
    analytics = await freshDatabase(backend)
    relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
    // the first key migrates the database; the second after it. Admins of their workspace: the UI's history route asks for it
    keyA = await createKey(relational.url, ["--admin", "--workspace", "team-a"])
    keyB = await createKey(relational.url, ["--admin", "--workspace", "team-b"])
    gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url } })
    trainA = ok(await post(keyA, `${train}/datapoints`, { datapoints: [datapoint("a-one"), datapoint("a-two")] })).ids
    trainB = ok(await post(keyB, `${train}/datapoints`, { datapoints: [datapoint("b-one")] })).ids
    ok(await post(keyA, `/v1/datasets/only-a/datapoints`, { datapoints: [datapoint("a-only")] }))
  })
  afterAll(async () => {
    await gateway?.stop()
    if (relational !== analytics) await relational?.drop()
    await analytics?.drop()
  })

  it("lists each workspace's datasets, and each `train` holds its own datapoints (listed and searched)", async () => {
    const datasets = async (key: ApiKey) =>
      ok(await call(gateway, "GET", "/v1/datasets", { key })).datasets.map((d: any) => [d.name, d.datapoint_count])
    expect(await datasets(keyA)).toEqual([["only-a", 1], ["train", 2]])
    expect(await datasets(keyB)).toEqual([["train", 1]])
    expect(await listTexts(keyA)).toEqual(["a-one", "a-two"])
    expect(await listTexts(keyB)).toEqual(["b-one"])
    expect(await listTexts(keyB, "train", { search_query: "a-one" })).toEqual([])
    expect(await listTexts(keyB, "only-a")).toEqual([])
  })

  it("answers A's datapoint through B as an unknown id on get, update, metadata, delete and history; A's stays as it was", async () => {
    const [id] = trainA
    const unknown = uuidv7()
    expect(ok(await post(keyB, `${train}/get_datapoints`, { ids: [id] })).datapoints).toEqual([])
    const same = async (request: (id: string) => Promise<Answer>) => {
      const [theirs, missing] = [await request(id), await request(unknown)]
      expect(theirs.status).toBe(404)
      expect(shape(theirs, id)).toEqual(shape(missing, unknown))
    }
    await same((target) => call(gateway, "PATCH" as "POST", `${train}/datapoints`, { key: keyB, body: { datapoints: [{ id: target, type: "chat", output: [{ type: "text", text: "changed" }] }] } }))
    await same((target) => call(gateway, "PATCH" as "POST", `${train}/datapoints/metadata`, { key: keyB, body: { datapoints: [{ id: target, name: "renamed" }] } }))
    await same((target) => call(gateway, "GET", `/v1/ui/datasets/train/datapoints/${target}/history`, { key: keyB }))
    const deleted = await call(gateway, "DELETE", `${train}/datapoints`, { key: keyB, body: { ids: [id] } })
    expect(ok(deleted)).toEqual({ num_deleted_datapoints: 0 })
    const [still] = ok(await post(keyA, `${train}/get_datapoints`, { ids: [id] })).datapoints
    expect(still).toMatchObject({ id, name: null, staled_at: null })
    expect(userTexts([still])).toEqual(["a-one"])
    expect(ok(await call(gateway, "GET", `/v1/ui/datasets/train/datapoints/${id}/history`, { key: keyA })).versions).toHaveLength(1)
  })

  it("exports, imports and builds from inferences in the caller's `train` only", async () => {
    const exported = await raw(keyB, "GET", `${train}/datapoints/export`)
    expect(exported.status).toBe(200)
    const lines = exported.text.trim().split("\n").map((line) => JSON.parse(line))
    expect(userTexts(lines)).toEqual(["b-one"])
    const imported = await raw(keyB, "POST", `/v1/datasets/imported/datapoints/import`, JSON.stringify(datapoint("b-imported")) + "\n")
    expect(imported.status, imported.text).toBe(200)
    expect(await listTexts(keyB, "imported")).toEqual(["b-imported"])
    expect(await listTexts(keyA, "imported")).toEqual([])
    expect((await raw(keyA, "GET", `/v1/datasets/imported/datapoints/export`)).text).toBe("")

    const inference = ok(await post(keyB, "/inference", { function_name: "plain", input: { messages: [{ role: "user", content: "b-inferred" }] } }))
    const built = await poll("B's inference to be stored", async () => {
      const answer = await post(keyB, `/v1/datasets/built/from_inferences`, { type: "inference_ids", inference_ids: [inference.inference_id] })
      return answer.status === 200 ? answer.body.ids : undefined
    })
    expect(built).toHaveLength(1)
    expect(await listTexts(keyB, "built")).toEqual(["b-inferred"])
    expect(await listTexts(keyA, "built")).toEqual([])
  })

  it("runs an evaluation over B's `train` on B's datapoints only; runs are invisible across workspaces; A's dataset is no dataset of B", async () => {
    const answer = await post(keyB, "/v1/evaluations/run", { function_name: "plain", dataset_name: "train", evaluator_names: ["exact"] })
    expect(answer.status, answer.text).toBe(200)
    const events = runEvents(answer)
    const start = events.find((event) => event.type === "start")
    expect(start.datapoint_count).toBe(1)
    expect(events.filter((event) => event.type === "result").map((event) => event.datapoint_id)).toEqual(trainB)
    const runId = start.run_id

    expect(ok(await call(gateway, "GET", "/v1/evaluations/runs", { key: keyB })).runs.map((run: any) => run.run_id)).toEqual([runId])
    expect(ok(await call(gateway, "GET", "/v1/evaluations/runs", { key: keyA })).runs).toEqual([])
    expect(ok(await call(gateway, "GET", `/v1/evaluations/runs/${runId}`, { key: keyB })).run.run_id).toBe(runId)
    const unknown = uuidv7()
    const theirs = await call(gateway, "GET", `/v1/evaluations/runs/${runId}`, { key: keyA })
    expect(theirs.status).toBe(404)
    expect(shape(theirs, runId)).toEqual(shape(await call(gateway, "GET", `/v1/evaluations/runs/${unknown}`, { key: keyA }), unknown))

    const onlyA = await post(keyB, "/v1/evaluations/run", { function_name: "plain", dataset_name: "only-a", evaluator_names: ["exact"] })
    const missing = await post(keyB, "/v1/evaluations/run", { function_name: "plain", dataset_name: "no-such", evaluator_names: ["exact"] })
    expect(onlyA.status).toBe(404)
    expect(shape(onlyA, "only-a")).toEqual(shape(missing, "no-such"))
    // A's datapoint ids given to B's run are unknown ones
    const byIds = await post(keyB, "/v1/evaluations/run", { function_name: "plain", datapoint_ids: [trainA[1]], evaluator_names: ["exact"] })
    const byUnknown = await post(keyB, "/v1/evaluations/run", { function_name: "plain", datapoint_ids: [unknown], evaluator_names: ["exact"] })
    expect(byIds.status).toBe(404)
    expect(shape(byIds, trainA[1])).toEqual(shape(byUnknown, unknown))
  })

  it("gateway evaluate --workspace runs in that workspace (its `train`, its runs); a bad name is a usage error", async () => {
    const env = { env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url }, timeoutMs: 30_000 }
    const args = ["evaluate", "--config-file", path.join(gateway.dir, "config.toml"), "--function-name", "plain", "--dataset-name", "train", "--format", "jsonl"]
    const result = await runGateway([...args, "--workspace", "team-b"], env)
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(lines.filter((line) => line.datapoint_id !== undefined).map((line) => line.datapoint_id)).toEqual(trainB)
    const runId = /evaluation run ([0-9a-f-]{36})/.exec(result.stderr)![1]
    expect(ok(await call(gateway, "GET", `/v1/evaluations/runs/${runId}`, { key: keyB })).run.datapoint_count).toBe(1)
    expect((await call(gateway, "GET", `/v1/evaluations/runs/${runId}`, { key: keyA })).status).toBe(404)
    const bad = await runGateway([...args, "--workspace", "team b"], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`--workspace: "team b" is not a workspace name`)
  })

  it("keeps workflow runs and episodes in their workspace; B's inference naming A's run episode is not pinned", async () => {
    const runId = ok(await post(keyA, "/workflow_evaluation_run", { variants: { plain: "pinned" }, project_name: "p" })).run_id
    const episodeId = ok(await post(keyA, `/workflow_evaluation_run/${runId}/episode`, {})).episode_id
    const unknown = uuidv7()
    for (const family of ["workflow", "dynamic"]) {
      const read = await call(gateway, "GET", `/${family}_evaluation_run/${runId}`, { key: keyB })
      expect(read.status).toBe(404)
      expect(shape(read, runId)).toEqual(shape(await call(gateway, "GET", `/${family}_evaluation_run/${unknown}`, { key: keyB }), unknown))
      const episode = await post(keyB, `/${family}_evaluation_run/${runId}/episode`, {})
      expect(episode.status).toBe(404)
      expect(shape(episode, runId)).toEqual(shape(await post(keyB, `/${family}_evaluation_run/${unknown}/episode`, {}), unknown))
      expect(ok(await call(gateway, "GET", `/${family}_evaluation_runs`, { key: keyB })).runs).toEqual([])
      expect(ok(await call(gateway, "GET", `/${family}_evaluation_runs`, { key: keyA })).runs.map((run: any) => run.run_id)).toEqual([runId])
    }
    const input = { messages: [{ role: "user", content: "hi" }] }
    expect(ok(await post(keyA, "/inference", { function_name: "plain", input, episode_id: episodeId })).variant_name).toBe("pinned")
    expect(ok(await post(keyB, "/inference", { function_name: "plain", input, episode_id: episodeId })).variant_name).toBe("only")
    const details = ok(await call(gateway, "GET", `/workflow_evaluation_run/${runId}`, { key: keyA }))
    expect(details.episodes.map((episode: any) => episode.episode_id)).toEqual([episodeId])
  })

  it("deletes B's `train` only when B deletes its dataset; deleting a dataset only A has deletes nothing", async () => {
    expect(ok(await call(gateway, "DELETE", "/v1/datasets/only-a", { key: keyB }))).toEqual({ num_deleted_datapoints: 0 })
    expect(ok(await call(gateway, "DELETE", train, { key: keyB }))).toEqual({ num_deleted_datapoints: 1 })
    expect(await listTexts(keyB)).toEqual([])
    expect(await listTexts(keyA)).toEqual(["a-one", "a-two"])
    expect(await listTexts(keyA, "only-a")).toEqual(["a-only"])
  })
})
