/**
 * Configuration reload without a restart (issue 21): SIGHUP, `POST /internal/config/reload`
 * (an admin key when authentication is on) and `--watch-config` load the files again; a valid
 * configuration serves the requests that start afterwards while a stream in flight finishes on
 * the old one, an invalid one leaves the old one serving (400 with its problems), `/status`
 * shows the configuration's hash and load time, and with workers every worker reloads. Real
 * processes; the provider is a fake OpenAI server.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createKey, pollUntil } from "../support/access.ts"
import { freshDatabase } from "../support/databases.ts"
import { rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"
import { type FakeOpenAi, startFakeOpenAi, textStreamChunks } from "../support/fakeOpenAi.ts"

let fake: FakeOpenAi
beforeAll(async () => {
  fake = await startFakeOpenAi()
})
afterAll(async () => {
  await fake?.close()
})

/** a chat function whose variants each call the fake with their own system template */
const configWith = (variants: ReadonlyArray<string>, extra = "") => `
[models.fake]
routing = ["openai"]

[models.fake.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${fake.apiBase}"
api_key_location = "none"

[functions.chat]
type = "chat"
${variants.map((name) => `
[functions.chat.variants.${name}]
type = "chat_completion"
model = "fake"
weight = 1
templates.system.path = "${name}.minijinja"
`).join("")}
${extra}`

const templates = { "a.minijinja": "You are variant a.", "b.minijinja": "You are variant b." }

const chat = (variant: string) => ({ function_name: "chat", variant_name: variant, input: { messages: [{ role: "user", content: "Hi" }] } })

interface Status {
  readonly config: { readonly hash: string; readonly loaded_at: string }
  readonly worker?: number
}
const statusOf = async (gateway: RunningGateway): Promise<Status> => (await gateway.get("/status")).body

const writeConfig = (gateway: RunningGateway, text: string) => fs.writeFileSync(path.join(gateway.dir, "config.toml"), text)

describe("one process", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: configWith(["a"]), files: templates, args: ["--config-file", "config.toml", "--watch-config"] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("serves a variant added by SIGHUP, and /status shows the new configuration's hash and load time", async () => {
    const before = await statusOf(gateway)
    expect(before.config.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(Date.parse(before.config.loaded_at)).toBeLessThanOrEqual(Date.now())
    expect((await gateway.post("/inference", chat("b"))).status).toBe(404)

    writeConfig(gateway, configWith(["a", "b"]))
    gateway.process.kill("SIGHUP")
    const { value: after } = await pollUntil(() => statusOf(gateway), (status) => status.config.hash !== before.config.hash, 10_000)
    expect(Date.parse(after.config.loaded_at)).toBeGreaterThan(Date.parse(before.config.loaded_at))

    fake.reset()
    const answer = await gateway.post("/inference", chat("b"))
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.variant_name).toBe("b")
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "You are variant b." })
    expect(gateway.log()).toMatch(/configuration reloaded \([0-9a-f]{12}\): \d+ functions, 1 models/)
    // the UI's configuration page shows the configuration serving
    const shown = (await gateway.get("/v1/ui/config")).body.functions.find((fn: { name: string }) => fn.name === "chat")
    expect(shown.variants.map((variant: { name: string }) => variant.name).sort()).toEqual(["a", "b"])
  })

  it("keeps the configuration serving when the files do not validate: the endpoint answers 400 with the problems, logged as at start-up", async () => {
    const before = await statusOf(gateway)
    writeConfig(gateway, configWith(["a", "b"], "[metrics.liked]\ntype = \"boolean\"\nlevel = \"inference\"\noptimize = \"max\"\nrating = 5\n"))
    const answer = await call(gateway, "POST", "/internal/config/reload")
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(/the configuration is invalid \(1 problem\): the configuration serving stays/)
    expect(answer.body.errors).toEqual([expect.stringMatching(/config\.toml: metrics\.liked\.rating: unknown field/)])
    expect(answer.body.config).toEqual(before.config)
    expect(gateway.log()).toMatch(/the reloaded configuration is invalid \(1 problem\); the configuration serving stays:\n\s+\S*config\.toml: metrics\.liked\.rating: unknown field/)

    // the old configuration still serves, unchanged
    expect((await statusOf(gateway)).config).toEqual(before.config)
    expect((await gateway.post("/inference", chat("b"))).status).toBe(200)

    // put right: the same request reloads
    writeConfig(gateway, configWith(["a", "b"], "[metrics.liked]\ntype = \"boolean\"\nlevel = \"inference\"\noptimize = \"max\"\n"))
    const fixed = await call(gateway, "POST", "/internal/config/reload")
    expect(fixed.status).toBe(200)
    expect(fixed.body).toEqual({ status: "reloaded", config: { hash: expect.not.stringMatching(before.config.hash), loaded_at: expect.any(String) }, warnings: [] })
    // and again with nothing changed: nothing rebuilt
    expect((await call(gateway, "POST", "/internal/config/reload")).body).toEqual({ status: "unchanged", config: fixed.body.config, warnings: [] })
  })

  it("lets a stream in flight finish on the old configuration while new requests use the new one", async () => {
    fake.reset()
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["one", " two", " three", " four", " five"]), chunkDelayMs: 250 })
    const response = await fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...chat("a"), stream: true })
    })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toContain("data: ")

    // variant a goes away while its stream runs
    writeConfig(gateway, configWith(["b"]))
    const reloaded = await call(gateway, "POST", "/internal/config/reload")
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.status).toBe("reloaded")
    expect((await gateway.post("/inference", chat("a"))).status).toBe(404)

    let text = new TextDecoder().decode(first.value)
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += new TextDecoder().decode(part.value)
    const events = text.split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => block.slice(6))
    expect(events.at(-1)).toBe("[DONE]")
    const said = events.slice(0, -1).map((event) => JSON.parse(event)).flatMap((chunk) => chunk.content ?? []).map((block: any) => block.text ?? "").join("")
    expect(said).toBe("one two three four five")
  })

  it("reloads when a template changes (--watch-config)", async () => {
    writeConfig(gateway, configWith(["b"]))
    await call(gateway, "POST", "/internal/config/reload")
    const before = await statusOf(gateway)
    fs.writeFileSync(path.join(gateway.dir, "b.minijinja"), "You are variant b, edited.")
    await pollUntil(() => statusOf(gateway), (status) => status.config.hash !== before.config.hash, 10_000)
    fake.reset()
    expect((await gateway.post("/inference", chat("b"))).status).toBe(200)
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "You are variant b, edited." })
    expect(gateway.log()).toMatch(/configuration: reloading \((\S+, )*\S*\/b\.minijinja(, \S+)* changed\)/)
  })
})

describe("budgets added by a reload, none at start-up", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: configWith(["a"]), files: templates, args: ["--config-file", "config.toml"] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("take effect at the next restart, and the reload says so: no counters were opened", async () => {
    writeConfig(gateway, configWith(["a"], budgetOf(0)))
    const reloaded = await call(gateway, "POST", "/internal/config/reload")
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.warnings).toEqual([expect.stringContaining("[[rate_limiting.budgets]] added by a reload take effect at the next restart")])
    // a budget of 0 would refuse every call in its scope
    expect((await gateway.post("/inference", { ...chat("a"), tags: { reload_budget: "z" } })).status).toBe(200)
  })
})

describe("a glob of configuration files, watched", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({
      files: { "conf/main.toml": configWith(["a"]), "conf/a.minijinja": templates["a.minijinja"], "conf/b.minijinja": templates["b.minijinja"] },
      args: ["--config-file", "conf/*.toml", "--watch-config"]
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("reloads when a new file matches the glob", async () => {
    const before = await statusOf(gateway)
    expect((await gateway.post("/inference", chat("b"))).status).toBe(404)
    fs.writeFileSync(path.join(gateway.dir, "conf", "more.toml"), `[functions.chat.variants.b]\ntype = "chat_completion"\nmodel = "fake"\nweight = 1\ntemplates.system.path = "b.minijinja"\n`)
    await pollUntil(() => statusOf(gateway), (status) => status.config.hash !== before.config.hash, 10_000)
    expect((await gateway.post("/inference", chat("b"))).status).toBe(200)
    expect(gateway.log()).toMatch(/configuration: reloading \(\S*conf\/more\.toml changed\)/)
  })
})

/** a rate limit on the inferences tagged `reload_test` */
const limitedTo = (perMinute: number) =>
  `[[rate_limiting.rules]]\nalways = true\nmodel_inferences_per_minute = ${perMinute}\nscope = [{ tag_key = "reload_test", tag_value = "gateway::each" }]\n`

/** a budget of `limit` a day per value of the tag `reload_budget`; the dummy models price nothing, so each call is charged `default_cost` = 1 */
const budgetOf = (limit: number) =>
  `[rate_limiting]\ndefault_cost = 1\n[[rate_limiting.budgets]]\nscope = [{ tag_key = "reload_budget", tag_value = "gateway::each" }]\nperiod = "day"\nlimit = ${limit}\n`

describe("with authentication on", () => {
  let gateway: RunningGateway
  let admin: string
  let plain: string
  beforeAll(async () => {
    const database = await freshDatabase("postgres")
    ;[admin, plain] = [(await createKey(database.url, ["--admin"])).key, (await createKey(database.url)).key]
    gateway = await startGateway({
      // a rule and a budget from the start: reloaded rules and budgets count in the buckets and counters opened then
      config: configWith(["a"], `[gateway.auth]\nenabled = true\n${budgetOf(100)}${limitedTo(100)}`),
      files: templates,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("needs an admin key to reload; /status still shows the configuration", async () => {
    expect((await call(gateway, "POST", "/internal/config/reload")).status).toBe(401)
    const refused = await call(gateway, "POST", "/internal/config/reload", { key: plain })
    expect(refused.status).toBe(403)
    // the refusal names the route's own need of the role; the UI's routes keep theirs
    expect(refused.body.error).toMatch(/^API key [a-z0-9]{12} does not have the admin role, which reloading the configuration requires: create one with `gateway --create-api-key --admin`$/)
    const ui = await call(gateway, "GET", "/v1/ui/config", { key: plain })
    expect(ui.status).toBe(403)
    expect(ui.body.error).toMatch(/does not have the admin role, which the UI requires/)
    const before = await statusOf(gateway)
    writeConfig(gateway, configWith(["a", "b"], "[gateway.auth]\nenabled = true\n"))
    const reloaded = await call(gateway, "POST", "/internal/config/reload", { key: admin })
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.status).toBe("reloaded")
    expect((await statusOf(gateway)).config.hash).toBe(reloaded.body.config.hash)
    expect(reloaded.body.config.hash).not.toBe(before.config.hash)
  })

  it("reloads [rate_limiting] rules onto the buckets opened at start-up", async () => {
    const limited = (perMinute: number) => configWith(["a", "b"], `[gateway.auth]\nenabled = true\n${limitedTo(perMinute)}`)
    const infer = (tag: string) => call(gateway, "POST", "/inference", { body: { ...chat("a"), tags: { reload_test: tag } }, key: admin })
    writeConfig(gateway, limited(100))
    expect((await call(gateway, "POST", "/internal/config/reload", { key: admin })).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await infer("x")).status).toBe(200)

    writeConfig(gateway, limited(3))
    expect((await call(gateway, "POST", "/internal/config/reload", { key: admin })).status).toBe(200)
    // a changed rule starts with fresh buckets (src/ratelimit/rules.ts): three more, then refused
    for (let i = 0; i < 3; i++) expect((await infer("x")).status).toBe(200)
    const refused = await infer("x")
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
    expect((await infer("y")).status).toBe(200)
  })

  it("reloads budgets onto the counters opened at start-up: a lowered limit applies at once to the spend so far", async () => {
    const infer = (tag: string) => call(gateway, "POST", "/inference", { body: { ...chat("a"), tags: { reload_budget: tag } }, key: admin })
    writeConfig(gateway, configWith(["a", "b"], `[gateway.auth]\nenabled = true\n${budgetOf(100)}`))
    expect((await call(gateway, "POST", "/internal/config/reload", { key: admin })).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await infer("x")).status).toBe(200)

    writeConfig(gateway, configWith(["a", "b"], `[gateway.auth]\nenabled = true\n${budgetOf(3)}`))
    const reloaded = await call(gateway, "POST", "/internal/config/reload", { key: admin })
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.warnings ?? []).toEqual([])
    // the counter is the budget's scope and period, not its limit: 2 spent, one more fits
    expect((await infer("x")).status).toBe(200)
    const refused = await infer("x")
    expect(refused.status).toBe(429)
    expect(refused.body.budget).toMatchObject({ limit: 3, spent: 3, remaining: 0 })
    expect((await infer("y")).status).toBe(200)
  })

  it("keeps [gateway] as it started, and says so", async () => {
    writeConfig(gateway, configWith(["a", "b"], "[gateway]\nbase_path = \"/moved\"\n[gateway.auth]\nenabled = true\n"))
    const reloaded = await call(gateway, "POST", "/internal/config/reload", { key: admin })
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.warnings).toEqual([expect.stringMatching(/\[gateway\] base_path changed: \[gateway\] takes effect at the next restart/)])
    expect((await call(gateway, "POST", "/inference", { body: chat("b"), key: admin })).status).toBe(200)
  })
})

describe("with two workers", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: configWith(["a"]), files: templates, args: ["--config-file", "config.toml", "--workers", "2"] })
    await pollUntil(async () => gateway.log().match(/Listening on http/g)?.length ?? 0, (lines) => lines >= 2, 20_000)
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  /** the configuration hash of each worker, read from `/status` over fresh connections until both answered */
  const hashesByWorker = async (): Promise<Map<number, string>> => {
    const seen = new Map<number, string>()
    for (let attempt = 0; attempt < 400 && seen.size < 2; attempt++) {
      const status = JSON.parse((await rawRequest(gateway.url + "/status")).text) as Status
      seen.set(status.worker!, status.config.hash)
    }
    expect(seen.size).toBe(2)
    return seen
  }

  it("reload every worker: on POST /internal/config/reload to one of them, and on SIGHUP to the primary", async () => {
    const [start] = new Set((await hashesByWorker()).values())
    writeConfig(gateway, configWith(["a", "b"]))
    const reloaded = await call(gateway, "POST", "/internal/config/reload")
    expect(reloaded.status).toBe(200)
    const { value: afterPost } = await pollUntil(hashesByWorker, (hashes) => [...hashes.values()].every((hash) => hash === reloaded.body.config.hash), 10_000)
    expect([...afterPost.values()]).not.toContain(start)

    writeConfig(gateway, configWith(["b"]))
    gateway.process.kill("SIGHUP")
    const { value: afterHangup } = await pollUntil(hashesByWorker, (hashes) => [...hashes.values()].every((hash) => hash !== reloaded.body.config.hash), 10_000)
    expect(new Set(afterHangup.values()).size).toBe(1)
    const answers = await Promise.all(Array.from({ length: 10 }, () => rawRequest(gateway.url + "/inference", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat("a"))
    })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(404))
  })

  it("forces every worker's reload when the one asked over HTTP was forced (SIGHUP would not force theirs)", async () => {
    const before = await hashesByWorker()
    writeConfig(gateway, "")
    const refused = await call(gateway, "POST", "/internal/config/reload")
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatch(/defines no functions and no models/)
    expect(await hashesByWorker()).toEqual(before)

    const forced = await call(gateway, "POST", "/internal/config/reload?force=true")
    expect(forced.status, JSON.stringify(forced.body)).toBe(200)
    expect(forced.body.status).toBe("reloaded")
    await pollUntil(hashesByWorker, (hashes) => [...hashes.values()].every((hash) => hash === forced.body.config.hash), 10_000)
    expect(gateway.log()).toMatch(/configuration: reloading \(another worker's forced reload, forced\)/)
  })
})
