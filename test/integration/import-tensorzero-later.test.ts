/**
 * `gateway import-tensorzero` run again after TensorZero went on working: it picks up what
 * changed in rows already imported and what arrived since. After a first import, TensorZero
 * (its Postgres) stales a live datapoint (as its delete does), disables a key, and records new
 * feedback on an old inference and a new inference; the second run brings each of those over,
 * seen through this gateway's HTTP API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../support/access.ts"
import { freshDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"
import { createTensorZeroPostgres, runStatements, seedTensorZero, type TensorZeroManifest, uuidv7 } from "../support/tensorzeroPostgres.ts"

const config = `
${observabilityToml()}
[gateway.auth]
enabled = true
cache_ttl_ms = 0
`

describe.each<TestBackend>(["postgres", "clickhouse"])("import-tensorzero run again later, into %s", (backend) => {
  let source: TestDatabase
  let destination: TestDatabase
  let relational: TestDatabase
  let manifest: TensorZeroManifest
  let gateway: RunningGateway
  const now = Date.now()
  const newFeedback = uuidv7(now, 1)
  const newInference = uuidv7(now, 2)
  const importAgain = () =>
    runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url], {
      env: backend === "clickhouse" ? { GATEWAY_RELATIONAL_DB_URL: relational.url } : {},
      timeoutMs: 90_000
    })

  beforeAll(async () => {
    ;[source, destination] = await Promise.all([freshDatabase("postgres"), freshDatabase(backend)])
    relational = backend === "clickhouse" ? await freshDatabase("postgres") : destination
    await createTensorZeroPostgres(source)
    manifest = await seedTensorZero(source.url)
    const first = await importAgain()
    expect(first.code, first.stderr + first.stdout).toBe(0)
    gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: destination.url, GATEWAY_RELATIONAL_DB_URL: relational.url } })
  }, 120_000)

  afterAll(async () => {
    await gateway?.stop()
    if (relational !== destination) await relational?.drop()
    await Promise.all([source?.drop(), destination?.drop()])
  })

  it("brings over a datapoint staled, a key disabled, new feedback on an old inference and a new inference", async () => {
    const key = manifest.keys[0].key
    const lastKey = manifest.keys[3]
    const live = async () =>
      (await call(gateway, "POST", "/v1/datasets/haikus/list_datapoints", { key, body: { limit: 20 } })).body.datapoints.map((datapoint: any) => datapoint.id).sort()
    expect(await live()).toEqual([manifest.datapoint.chat, manifest.datapoint.editedNew].sort())
    expect((await call(gateway, "GET", "/v1/datasets", { key: lastKey.key })).status).toBe(200)

    const at = `(timestamptz 'epoch' + interval '1 millisecond' * ${now})`
    await runStatements(source.url, [
      `UPDATE tensorzero.chat_datapoints SET staled_at = ${at}, updated_at = ${at} WHERE id = '${manifest.datapoint.chat}'`,
      `UPDATE tensorzero_auth_api_key SET disabled_at = ${at}, updated_at = ${at} WHERE public_id = '${lastKey.publicId}'`,
      `INSERT INTO tensorzero.float_metric_feedback (id, target_id, metric_name, value, tags, created_at)
        VALUES ('${newFeedback}', '${manifest.inference.text}', 'user_rating', 2.5, '{"tensorzero::human_feedback":"true"}', ${at})`,
      `INSERT INTO tensorzero.chat_inferences (id, function_name, variant_name, episode_id, processing_time_ms, ttft_ms, tags, created_at)
        VALUES ('${newInference}', 'write_haiku', 'gpt_4o_mini', '${manifest.episode.chat}', 5, NULL, '{}', ${at})`,
      `INSERT INTO tensorzero.chat_inference_data (id, input, output, inference_params, extra_body, dynamic_tools, dynamic_provider_tools, created_at)
        VALUES ('${newInference}', '{"messages":[{"role":"user","content":[{"type":"text","text":"later"}]}]}', '[{"type":"text","text":"still here"}]', '{}', '[]', '[]', '[]', ${at})`
    ])

    const second = await importAgain()
    expect(second.code, second.stderr + second.stdout).toBe(0)

    expect(await live()).toEqual([manifest.datapoint.editedNew])
    expect((await call(gateway, "GET", "/v1/datasets", { key: lastKey.key })).status).toBe(401)
    const read = await call(gateway, "POST", "/v1/inferences/get_inferences", { key, body: { ids: [manifest.inference.text, newInference], include_feedback: true } })
    expect(read.status, read.text).toBe(200)
    const old = read.body.inferences.find((inference: any) => inference.inference_id === manifest.inference.text)
    expect(old.feedback.find((feedback: any) => feedback.feedback_id === newFeedback)).toMatchObject({ metric_name: "user_rating", value: 2.5, tags: { "gateway::human_feedback": "true" } })
    expect(read.body.inferences.find((inference: any) => inference.inference_id === newInference)).toMatchObject({ output: [{ type: "text", text: "still here" }] })
  })
})
