/**
 * A gateway for the UI's browser tests: the real `gateway` command on the embedded database (a
 * fresh pglite:// folder), with a configuration that gives every page something to show (two
 * functions with two variants each, metrics of each kind, evaluators, a tool, a model with a
 * fallback), and seeded data: tagged inferences in episodes, feedback, a dataset.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { launchBrowser } from "./browser.ts"
import { repoRoot, runGateway, type RunningGateway, startGateway } from "./gateway.ts"

const quickstartFunctions = (): Record<string, string> => {
  const folder = path.join(repoRoot, "examples/quickstart/functions")
  const files: Record<string, string> = {}
  for (const name of ["haiku/user_schema.json", "haiku/user.minijinja", "haiku/system.minijinja", "extract_greeting/output_schema.json"]) {
    files[`functions/${name}`] = fs.readFileSync(path.join(folder, name), "utf8")
  }
  return files
}

export const uiConfig = (auth: boolean) => `
[gateway]
bind_address = "127.0.0.1:0"
${auth ? "[gateway.auth]\nenabled = true\n" : ""}
[gateway.observability]
batch_writes = { flush_interval_ms = 50 }

[functions.haiku]
type = "chat"
description = "Writes a haiku about a topic"
schemas.user.path = "functions/haiku/user_schema.json"
tools = ["get_weather"]
tool_choice = "auto"

[functions.haiku.variants.echo]
type = "chat_completion"
model = "dummy::streamed_echo"
weight = 1
templates.system.path = "functions/haiku/system.minijinja"
templates.user.path = "functions/haiku/user.minijinja"

[functions.haiku.variants.fixed]
type = "chat_completion"
model = "dummy::hello"
weight = 1
templates.system.path = "functions/haiku/system.minijinja"
templates.user.path = "functions/haiku/user.minijinja"

[functions.haiku.evaluators.mentions_haiku]
type = "regex"
must_match = "haiku"

[functions.haiku.evaluators.matches_reference]
type = "exact_match"

[functions.extract_greeting]
type = "json"
output_schema = "functions/extract_greeting/output_schema.json"

[functions.extract_greeting.variants.dummy]
type = "chat_completion"
model = "my_model"

[tools.get_weather]
description = "The weather in a city"
parameters = "functions/get_weather.json"

[metrics.haiku_rating]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.quality]
type = "float"
level = "inference"
optimize = "max"

[metrics.task_success]
type = "boolean"
level = "episode"
optimize = "max"

[models.my_model]
routing = ["broken", "working"]

[models.my_model.providers.broken]
type = "dummy"
model_name = "error"

[models.my_model.providers.working]
type = "dummy"
model_name = "json"
`

const weatherTool = JSON.stringify({
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
})

export interface UiGateway {
  readonly gateway: RunningGateway
  readonly url: string
  /** `<url>/ui` */
  readonly ui: string
  /** an admin key (authentication on only) */
  readonly adminKey: string | undefined
  /** headers that authenticate a seeding request */
  readonly headers: Record<string, string>
  /** the ids of the seeded inferences, oldest first, with their tags */
  readonly seeded: ReadonlyArray<{ readonly inferenceId: string; readonly episodeId: string; readonly topic: string; readonly user: string }>
  /** a key command on the gateway's database (`--create-api-key`, ...): its stdout */
  readonly keyCommand: (args: ReadonlyArray<string>) => Promise<string>
  readonly stop: () => Promise<void>
}

/** Starts the gateway and seeds it: `inferences` haiku inferences (tagged user alice or bob), feedback on half, a dataset "seeded". */
export const startUiGateway = async (options: { auth?: boolean; inferences?: number } = {}): Promise<UiGateway> => {
  const auth = options.auth === true
  const folder = fs.mkdtempSync(path.join(process.env.GATEWAY_TEST_SCRATCH ?? "/tmp", "ui-db-"))
  const databaseUrl = `pglite://${folder}`
  const env = { GATEWAY_ANALYTICS_DB_URL: databaseUrl, GATEWAY_RELATIONAL_DB_URL: databaseUrl }
  // a new embedded database builds its tables at start-up: seconds on a machine busy with the rest of the suite
  const gateway = await startGateway({
    config: uiConfig(auth),
    files: { ...quickstartFunctions(), "functions/get_weather.json": weatherTool },
    env,
    startTimeoutMs: 60_000
  })
  const keyCommand = async (args: ReadonlyArray<string>) => {
    const result = await runGateway(args, { env, timeoutMs: 60_000 })
    if (result.code !== 0) throw new Error(`gateway ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
    return result.stdout.trim()
  }
  const adminKey = auth ? await keyCommand(["--create-api-key", "--admin"]) : undefined
  const headers: Record<string, string> = adminKey === undefined ? {} : { authorization: `Bearer ${adminKey}` }
  const seeded: Array<{ inferenceId: string; episodeId: string; topic: string; user: string }> = []
  const topics = ["the sea", "autumn", "a cat", "mountains", "rain", "the moon"]
  for (let i = 0; i < (options.inferences ?? 12); i++) {
    const topic = topics[i % topics.length]
    const user = i % 2 === 0 ? "alice" : "bob"
    const response = await gateway.post("/inference", {
      function_name: "haiku",
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { topic } }] }] },
      tags: { user, seed: "yes" }
    }, headers)
    if (response.status !== 200) throw new Error(`seeding inference ${i}: ${response.status} ${JSON.stringify(response.body)}`)
    seeded.push({ inferenceId: response.body.inference_id, episodeId: response.body.episode_id, topic, user })
  }
  const json = await gateway.post("/inference", { function_name: "extract_greeting", input: { messages: [{ role: "user", content: "Hello there" }] } }, headers)
  if (json.status !== 200) throw new Error(`seeding the json inference: ${json.status} ${JSON.stringify(json.body)}`)
  // the writes land in the database asynchronously: wait until they can be read
  await until(async () => {
    const listed = await gateway.post("/v1/inferences/list_inferences", { function_name: "haiku", limit: 100 }, headers)
    return listed.status === 200 && listed.body.inferences.length === seeded.length
  })
  for (const [i, { inferenceId }] of seeded.entries()) {
    if (i % 2 !== 0) continue
    const feedback = await gateway.post("/feedback", { metric_name: "haiku_rating", inference_id: inferenceId, value: i % 4 === 0 }, headers)
    if (feedback.status !== 200) throw new Error(`seeding feedback: ${feedback.status} ${JSON.stringify(feedback.body)}`)
  }
  const dataset = await gateway.post("/v1/datasets/seeded/from_inferences", { type: "inference_query", function_name: "haiku", output_source: "inference", limit: 4 }, headers)
  if (dataset.status !== 200) throw new Error(`seeding the dataset: ${dataset.status} ${JSON.stringify(dataset.body)}`)
  return {
    gateway,
    url: gateway.url,
    ui: `${gateway.url}/ui`,
    adminKey,
    headers,
    seeded,
    keyCommand,
    stop: async () => {
      await gateway.stop()
      fs.rmSync(folder, { recursive: true, force: true })
    }
  }
}

/** Polls `condition` every 100 ms until it holds (or fails after `timeoutMs`). */
export const until = async (condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * A suite of browser tests on one seeded gateway (`startUiGateway(options)`) and one browser:
 * both started before its tests (`started` is told them) and stopped after. A suite that seeds
 * more registers its own `beforeAll` after this, which runs once they are up.
 */
export const uiSuite = (
  options: Parameters<typeof startUiGateway>[0],
  started: (suite: { readonly gateway: UiGateway; readonly browser: Browser }) => void
): void => {
  let suite: { readonly gateway: UiGateway; readonly browser: Browser } | undefined
  beforeAll(async () => {
    const [gateway, browser] = await Promise.all([startUiGateway(options), launchBrowser()])
    suite = { gateway, browser }
    started(suite)
  }, 120_000)
  afterAll(async () => {
    await suite?.browser.close()
    await suite?.gateway.stop()
  })
}
