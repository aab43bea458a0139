/**
 * Hardening (issue 33, finding 3): one request must not make stored data unreadable. The
 * Postgres driver reads rows of at most 16 MiB; a larger one made every read touching it fail
 * with 503 "unavailable", for every caller, for good. Over HTTP, on a real database of each
 * backend (Postgres, ClickHouse, and the embedded PGlite), with authentication on:
 * - a 9.5 MB message to `dummy::echo_request_messages` is answered whole and stored cut down to
 *   `[gateway.observability] max_row_bytes`, its cut texts marked, logged and counted; every
 *   caller's `list_inferences`, `get_inferences` and the UI's inference route keep answering;
 *   a 9 MiB comment is refused with 413;
 * - a 20 MB line of a dataset import, or a 9 MiB one, is refused with 413 naming the limit and the line, and the
 *   dataset's listing and export keep answering;
 * - rows too large to read, inserted with SQL as an earlier version could have stored them, do
 *   not break the listings of inferences, model calls and datapoints (Postgres reads them with
 *   placeholders saying so; ClickHouse, whose reader has no such limit, reads them whole);
 * - `[gateway] dummy_shorthands = false` refuses `dummy::` short-hands on /inference, the
 *   OpenAI-compatible route and embeddings, while a configured model of type "dummy" works.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { v7 as uuidv7 } from "uuid"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clickHouseCommand, freshDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { poll, userInput } from "../support/observability.ts"

const MiB = 1024 * 1024
const maxRowBytes = 8 * MiB
const truncated = "[gateway: truncated"
const notRead = "[gateway: not read"

const config = `
[gateway.auth]
enabled = true

[gateway.observability]
batch_writes = { flush_interval_ms = 50 }

[functions.notes]
type = "chat"
[functions.notes.variants.echo]
type = "chat_completion"
model = "dummy::echo_request_messages"
`

/** runs one statement in `database` (Postgres or PGlite) */
const postgresStatement = async (database: TestDatabase, statement: string) => {
  const url = new URL(database.url)
  await promisify(execFile)("psql", [
    "-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username) || "postgres", "-d", database.name,
    "-v", "ON_ERROR_STOP=1", "-q", "-c", statement
  ], { maxBuffer: 16 * MiB })
}

/** SQL of a text of `length` characters `z` on `backend` (ClickHouse 18.16 has no `repeat`) */
const longText = (backend: TestBackend, length: number) =>
  backend === "clickhouse" ? `arrayStringConcat(arrayMap(x -> 'z', range(${length})))` : `repeat('z', ${length})`

/**
 * Stores, with SQL, what an earlier version of the gateway could have: a chat inference whose
 * input holds a 20 MB text, its model call with a 20 MB raw request, and a datapoint of 20 MB.
 */
const insertOversizedRows = async (database: TestDatabase, ids: { inference: string; episode: string; call: string; datapoint: string }, dataset: string) => {
  const backend = database.backend
  const big = longText(backend, 20_000_000)
  const input = backend === "clickhouse"
    ? `concat('{"messages":[{"role":"user","content":[{"type":"text","text":"', ${big}, '"}]}]}')`
    : `jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', jsonb_build_array(jsonb_build_object('type', 'text', 'text', ${big})))))`
  const output = `'[{"type":"text","text":"an old answer"}]'`
  if (backend === "clickhouse") {
    const db = database.name
    await clickHouseCommand(`INSERT INTO ${db}.ChatInference (id, function_name, variant_name, episode_id, input, output, tool_params, inference_params, processing_time_ms, ttft_ms, tags.key, tags.value, timestamp_ms)
      SELECT toUUID('${ids.inference}'), 'notes', 'echo', toUUID('${ids.episode}'), ${input}, ${output}, NULL, '{"chat_completion":{}}', 1, NULL, [], [], toUInt64(${Date.now()})`)
    await clickHouseCommand(`INSERT INTO ${db}.ModelInference (id, inference_id, model_name, model_provider_name, raw_request, raw_response, system, input_messages, output, input_tokens, output_tokens, response_time_ms, ttft_ms, finish_reason, cached, timestamp_ms)
      SELECT toUUID('${ids.call}'), toUUID('${ids.inference}'), 'dummy::echo_request_messages', 'dummy', ${big}, '{}', NULL, '[]', ${output}, 1, 1, 1, NULL, 'stop', 0, toUInt64(${Date.now()})`)
    await clickHouseCommand(`INSERT INTO ${db}.Datapoint (dataset_name, id, function_name, function_type, input, output, episode_id, tags.key, tags.value, name, tool_params, output_schema, source_inference_id, first_version_id, is_custom, staled_at_ms, updated_at_ms, search_text, version)
      SELECT '${dataset}', toUUID('${ids.datapoint}'), 'notes', 'chat', ${input}, ${output}, NULL, [], [], 'old', NULL, NULL, NULL, NULL, 1, NULL, toUInt64(${Date.now()}), '', toUInt64(${Date.now()})`)
    return
  }
  await postgresStatement(database, `INSERT INTO chat_inference (id, function_name, variant_name, episode_id, input, output, tool_params, inference_params, processing_time_ms, ttft_ms, tags, timestamp)
    VALUES ('${ids.inference}', 'notes', 'echo', '${ids.episode}', ${input}, ${output}, NULL, '{"chat_completion":{}}', 1, NULL, '{}', now())`)
  await postgresStatement(database, `INSERT INTO model_inference (id, inference_id, model_name, model_provider_name, raw_request, raw_response, system, input_messages, output, input_tokens, output_tokens, response_time_ms, ttft_ms, finish_reason, cached, timestamp)
    VALUES ('${ids.call}', '${ids.inference}', 'dummy::echo_request_messages', 'dummy', ${big}, '{}', NULL, '[]', ${output}, 1, 1, 1, NULL, 'stop', false, now())`)
  await postgresStatement(database, `INSERT INTO datapoint (id, dataset_name, function_name, function_type, input, output, episode_id, tags, name, tool_params, output_schema, source_inference_id, first_version_id, is_custom, staled_at, updated_at, search_text, timestamp)
    VALUES ('${ids.datapoint}', '${dataset}', 'notes', 'chat', ${input}, ${output}, NULL, '{}', 'old', NULL, NULL, NULL, NULL, true, NULL, now(), '', now())`)
}

describe.each(["postgres", "clickhouse", "pglite"] as const)("rows too large to read, on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway
  /** a key without the admin role, and an admin's: two callers */
  let userKey: string
  let adminKey: string

  const as = (key: string) => ({ authorization: `Bearer ${key}` })
  const getAs = async (key: string, route: string) => {
    const response = await fetch(gateway.url + route, { headers: as(key) })
    const text = await response.text()
    return { status: response.status, text, body: text.startsWith("{") ? JSON.parse(text) : text }
  }
  const listInferences = async (key: string, query: Record<string, unknown> = {}) => {
    const response = await gateway.post("/v1/inferences/list_inferences", { limit: 50, ...query }, as(key))
    expect(response.status, JSON.stringify(response.body).slice(0, 500)).toBe(200)
    return response.body.inferences as Array<any>
  }
  const metric = async (name: string) => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `))
    return line === undefined ? undefined : Number(line.split(" ")[1])
  }

  beforeAll(async () => {
    analytics = await freshDatabase(backend)
    relational = await freshDatabase("postgres")
    const env = { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url }
    gateway = await startGateway({ config, env })
    const key = async (...flags: Array<string>) => {
      const result = await runGateway(["--create-api-key", ...flags], { env, timeoutMs: 60_000 })
      if (result.code !== 0) throw new Error(`--create-api-key: ${result.stderr}`)
      return result.stdout.trim()
    }
    userKey = await key()
    adminKey = await key("--admin")
  }, 120_000)
  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
    await relational?.drop()
  })

  it("a 9.5 MB message to dummy::echo_request_messages is answered whole and stored cut down, marked; every caller's listings keep answering", async () => {
    const message = "x".repeat(9_500_000)
    const answered = await gateway.post("/inference", { model_name: "dummy::echo_request_messages", input: userInput(message) }, as(userKey))
    expect(answered.status, JSON.stringify(answered.body).slice(0, 300)).toBe(200)
    // the caller gets the whole answer (the echo answers the messages as JSON): only what is stored is bounded
    expect(JSON.parse(answered.body.content[0].text).messages[0].content[0].text).toBe(message)
    const id = answered.body.inference_id as string

    // (the embedded database serves one query at a time: while it writes the rows, a read may wait past the pool's connect timeout)
    await poll("the inference to be stored", async () => {
      const found = await gateway.post("/v1/inferences/list_inferences", { episode_id: answered.body.episode_id }, as(userKey))
      return found.status === 200 && found.body.inferences.length === 1 ? true : undefined
    }, { timeoutMs: 60_000 })
    const [stored] = await listInferences(userKey, { episode_id: answered.body.episode_id })
    expect(stored.inference_id).toBe(id)
    const input = stored.input.messages[0].content as string | Array<any>
    const inputText = typeof input === "string" ? input : input[0].text
    // input and output share the row's budget, each cut and marked
    expect(inputText.startsWith("xxxx")).toBe(true)
    expect(inputText).toContain(`${truncated} `)
    expect(inputText.length).toBeLessThan(maxRowBytes / 2 + 1000)
    expect(inputText.length).toBeGreaterThan(maxRowBytes / 4)
    expect(stored.output[0].text).toContain(`${truncated} `)

    // every caller: the key that made it, an admin, and the UI's own route
    expect((await listInferences(adminKey)).map((inference) => inference.inference_id)).toContain(id)
    const withCalls = await gateway.post("/v1/inferences/get_inferences", { ids: [id], include_model_inferences: true }, as(adminKey))
    expect(withCalls.status).toBe(200)
    const [call] = withCalls.body.inferences[0].model_inferences
    // the raw payloads go first
    expect(call.raw_request).toMatch(/^\[gateway: truncated \d+ of \d+ characters/)
    expect(call.raw_response).toMatch(/^\[gateway: truncated \d+ of \d+ characters/)
    const ui = await getAs(adminKey, `/v1/ui/inferences/${id}`)
    expect(ui.status, ui.text.slice(0, 300)).toBe(200)
    expect(ui.body.inference.inference_id).toBe(id)

    // said in the log and counted
    expect(gateway.log()).toMatch(/observability: a chat_inference row \(id [0-9a-f-]+\) of at least \d+ bytes was cut to \d+, over max_row_bytes \(8388608\): texts cut in input, output/)
    expect(gateway.log()).toMatch(/a model_inference row .* texts cut in raw_request, raw_response, input_messages, output/)
    expect(await metric("gateway_write_queue_truncated_rows_total")).toBeGreaterThanOrEqual(2)

    // and the gateway goes on: a normal inference is answered, stored whole and listed
    const normal = await gateway.post("/inference", { function_name: "notes", input: userInput("a normal note") }, as(userKey))
    expect(normal.status).toBe(200)
    const listed = await poll("the normal inference", async () => {
      const found = await listInferences(userKey, { episode_id: normal.body.episode_id })
      return found.length === 1 ? found[0] : undefined
    })
    expect(listed.input).toEqual(userInput("a normal note"))
    expect(listed.output[0].text).toContain("a normal note")

    // a comment is refused rather than cut: 413 naming the limit
    const comment = await gateway.post("/feedback", { metric_name: "comment", inference_id: normal.body.inference_id, value: "c".repeat(9 * MiB) }, as(userKey))
    expect(comment.status).toBe(413)
    expect(comment.body.error).toMatch(/^value: the comment is \d+ bytes as stored \(with its tags\), over the 8388608 bytes a stored row may hold/)
  }, 180_000)

  it("a 20 MB line of an import is refused with 413 naming the limit and the line; the dataset's listing and export keep answering", async () => {
    const dataset = "imported"
    const line = (text: string) => JSON.stringify({ type: "chat", function_name: "notes", input: userInput(text), output: [{ type: "text", text: "ok" }] })
    const first = await fetch(`${gateway.url}/v1/datasets/${dataset}/datapoints/import`, { method: "POST", headers: as(userKey), body: `${line("a small one")}\n` })
    expect(first.status).toBe(200)

    const importOf = async (body: string) => {
      const refused = await fetch(`${gateway.url}/v1/datasets/${dataset}/datapoints/import`, { method: "POST", headers: as(userKey), body })
      return { status: refused.status, error: (await refused.json() as { error: string }).error }
    }
    // a line longer than a request body may be is refused before it is parsed
    const tooLong = await importOf(`${line("fine")}\n${line("y".repeat(20_000_000))}\n`)
    expect(tooLong.status, tooLong.error).toBe(413)
    expect(tooLong.error).toBe("line 2: longer than 10485760 bytes, the limit of a datapoint line (max_request_body_bytes)")
    // a line a request may carry, whose datapoint is larger than a stored row may be
    const tooLarge = await importOf(`${line("fine")}\n${line("y".repeat(9 * MiB))}\n`)
    expect(tooLarge.status, tooLarge.error).toBe(413)
    expect(tooLarge.error).toMatch(/^line 2: the datapoint is \d+ bytes as stored, over the 8388608 bytes a stored row may hold \(\[gateway.observability\] max_row_bytes\)$/)

    // all or nothing: the good line of the refused import was not written either
    const listed = await gateway.post(`/v1/datasets/${dataset}/list_datapoints`, { limit: 10 }, as(adminKey))
    expect(listed.status).toBe(200)
    expect(listed.body.datapoints.map((datapoint: any) => datapoint.input)).toEqual([userInput("a small one")])
    const exported = await getAs(userKey, `/v1/datasets/${dataset}/datapoints/export`)
    expect(exported.status).toBe(200)
    expect(exported.text.trim().split("\n")).toHaveLength(1)

    // the same bound on create, naming the datapoint
    const created = await gateway.post(`/v1/datasets/${dataset}/datapoints`, { datapoints: [JSON.parse(line("z".repeat(9 * MiB)))] }, as(userKey))
    expect(created.status).toBe(413)
    expect(created.body.error).toMatch(/^datapoints\[0\]: the datapoint is \d+ bytes as stored, over the 8388608 bytes/)
  }, 120_000)

  it("rows stored too large to read, inserted with SQL, leave every listing answering", async () => {
    const dataset = "old_rows"
    const ids = { inference: uuidv7(), episode: uuidv7(), call: uuidv7(), datapoint: uuidv7() }
    await insertOversizedRows(analytics, ids, dataset)

    const listed = await listInferences(userKey)
    const old = listed.find((inference) => inference.inference_id === ids.inference)
    expect(old, "the old row is listed").toBeDefined()
    const text = old.input.messages[0].content[0].text as string
    if (backend === "clickhouse") {
      // ClickHouse's reader takes a row of any size: the row is read whole
      expect(text).toHaveLength(20_000_000)
    } else {
      // Postgres reads it with a placeholder of the input's shape saying why
      expect(text).toMatch(new RegExp(`^\\${notRead}: \\d+ bytes, over the \\d+ a read of one row takes`))
      expect(old.output).toEqual([{ type: "text", text: "an old answer" }])
    }
    expect((await listInferences(adminKey)).length).toBe(listed.length)

    const withCalls = await gateway.post("/v1/inferences/get_inferences", { ids: [ids.inference], include_model_inferences: true }, as(userKey))
    expect(withCalls.status, JSON.stringify(withCalls.body).slice(0, 300)).toBe(200)
    const [call] = withCalls.body.inferences[0].model_inferences
    if (backend === "clickhouse") expect(call.raw_request).toHaveLength(20_000_000)
    else expect(call.raw_request.startsWith(notRead)).toBe(true)
    const ui = await getAs(adminKey, `/v1/ui/inferences/${ids.inference}`)
    expect(ui.status, ui.text.slice(0, 300)).toBe(200)
    const episode = await getAs(adminKey, `/v1/ui/episodes/${ids.episode}`)
    expect(episode.status, episode.text.slice(0, 300)).toBe(200)

    const datapoints = await gateway.post(`/v1/datasets/${dataset}/list_datapoints`, { limit: 10 }, as(userKey))
    expect(datapoints.status, JSON.stringify(datapoints.body).slice(0, 300)).toBe(200)
    expect(datapoints.body.datapoints).toHaveLength(1)
    const exported = await getAs(userKey, `/v1/datasets/${dataset}/datapoints/export`)
    expect(exported.status).toBe(200)
    const [line] = exported.text.trim().split("\n").map((text) => JSON.parse(text))
    expect(line.id).toBe(ids.datapoint)
    if (backend !== "clickhouse") expect(line.input.messages[0].content[0].text.startsWith(notRead)).toBe(true)
  }, 180_000)
})

describe("[gateway] dummy_shorthands = false", () => {
  let gateway: RunningGateway

  beforeAll(async () => {
    gateway = await startGateway({
      config: `
[gateway]
dummy_shorthands = false

[models.echo]
routing = ["dummy"]
[models.echo.providers.dummy]
type = "dummy"
model_name = "echo_request_messages"

[functions.notes]
type = "chat"
[functions.notes.variants.echo]
type = "chat_completion"
model = "echo"
`
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const off = `the "dummy::" short-hands are off ([gateway] dummy_shorthands = false): configure a model of type "dummy" under [models] instead`

  it("refuses dummy:: short-hands on /inference, the OpenAI-compatible route and embeddings, naming the model and the setting", async () => {
    const native = await gateway.post("/inference", { model_name: "dummy::echo_request_messages", input: userInput("hello") })
    expect(native.status).toBe(404)
    expect(native.body).toEqual({ error: `unknown model "dummy::echo_request_messages": ${off}` })

    const openai = await gateway.post("/openai/v1/chat/completions", { model: "gateway::model_name::dummy::echo_request_messages", messages: [{ role: "user", content: "hello" }] })
    expect(openai.status).toBe(404)
    expect(openai.body.error.message).toBe(`unknown model "dummy::echo_request_messages": ${off}`)

    const embeddings = await gateway.post("/openai/v1/embeddings", { model: "dummy::embed", input: "hello" })
    expect(embeddings.status).toBe(404)
    expect(embeddings.body.error.message).toBe(`unknown embedding model "dummy::embed": ${off}`)
  })

  it("serves a configured model of type dummy, by name and through a function", async () => {
    const byName = await gateway.post("/inference", { model_name: "echo", input: userInput("hello") })
    expect(byName.status, JSON.stringify(byName.body)).toBe(200)
    // the echo answers the messages it was sent, as JSON
    expect(JSON.parse(byName.body.content[0].text).messages[0].content[0].text).toBe("hello")
    const byFunction = await gateway.post("/openai/v1/chat/completions", { model: "gateway::function_name::notes", messages: [{ role: "user", content: "hi" }] })
    expect(byFunction.status, JSON.stringify(byFunction.body)).toBe(200)
    expect(JSON.parse(byFunction.body.choices[0].message.content).messages[0].content[0].text).toBe("hi")
  })

  it("refuses at start-up a variant naming a dummy:: short-hand", async () => {
    const dir = writeFiles({ "config.toml": "[gateway]\ndummy_shorthands = false\n[functions.f]\ntype = \"chat\"\n[functions.f.variants.v]\ntype = \"chat_completion\"\nmodel = \"dummy::echo_request_messages\"\n" })
    const result = await runGateway(["--config-file", path.join(dir, "config.toml")], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }, cwd: dir, timeoutMs: 30_000 })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`functions.f.variants.v.model: model "dummy::echo_request_messages": ${off}`)
  })
})
