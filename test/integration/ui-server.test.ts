/**
 * The web UI as the gateway serves it (layers/http/uiAssets.ts) and the configuration it reads
 * (`GET /v1/ui/config`), over HTTP with the real command line: the page with its <base> and
 * security headers, revalidated by ETag; hashed assets cached for a year and gzipped; a missing
 * asset a 404 while any other path is the page; the UI under `base_path`, and turned off.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rawRequest, repoRoot, type RunningGateway, startGateway } from "../support/gateway.ts"
import { uiConfig } from "../support/uiGateway.ts"

const uiFiles = () => {
  const folder = path.join(repoRoot, "examples/quickstart/functions")
  return {
    "functions/haiku/user_schema.json": fs.readFileSync(path.join(folder, "haiku/user_schema.json"), "utf8"),
    "functions/haiku/user.minijinja": fs.readFileSync(path.join(folder, "haiku/user.minijinja"), "utf8"),
    "functions/haiku/system.minijinja": fs.readFileSync(path.join(folder, "haiku/system.minijinja"), "utf8"),
    "functions/extract_greeting/output_schema.json": fs.readFileSync(path.join(folder, "extract_greeting/output_schema.json"), "utf8"),
    "functions/get_weather.json": JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
  }
}

const secretProvider = `
[models.secret_model]
routing = ["openai"]
[models.secret_model.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_key_location = "env::UI_TEST_OPENAI_KEY"
extra_headers = [{ name = "x-team-token", value = "team-secret-value" }]
`

describe("the web UI's files", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: uiConfig(false) + secretProvider, files: uiFiles(), env: { UI_TEST_OPENAI_KEY: "sk-very-secret-key" } })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("serves the page at /ui and at every route below it, with its <base>, security headers and an ETag to revalidate", async () => {
    for (const route of ["/ui", "/ui/", "/ui/inferences/0192", "/ui/datasets/x/datapoints/y"]) {
      const response = await rawRequest(gateway.url + route)
      expect(response.status, route).toBe(200)
      expect(response.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(response.text).toContain('<base href="/ui/">')
      expect(response.text).toContain('<div id="root">')
      expect(response.headers["cache-control"]).toBe("no-cache")
      expect(response.headers["content-security-policy"]).toContain("default-src 'self'")
      expect(response.headers["x-frame-options"]).toBe("DENY")
    }
    const first = await rawRequest(`${gateway.url}/ui/`)
    const again = await rawRequest(`${gateway.url}/ui/`, { headers: { "if-none-match": String(first.headers.etag) } })
    expect(again.status).toBe(304)
    expect(again.text).toBe("")
  })

  it("serves the hashed assets the page names, cached for a year, gzipped when asked, and a 404 for a missing one", async () => {
    const page = await rawRequest(`${gateway.url}/ui/`)
    const scripts = [...page.text.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1])
    expect(scripts.some((file) => file.endsWith(".js"))).toBe(true)
    expect(scripts.some((file) => file.endsWith(".css"))).toBe(true)
    for (const file of scripts) {
      const plain = await rawRequest(`${gateway.url}/ui/${file}`)
      expect(plain.status, file).toBe(200)
      expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
      expect(plain.text).toBe(fs.readFileSync(path.join(repoRoot, "dist/ui", file), "utf8"))
    }
    const script = scripts.find((file) => file.endsWith(".js"))!
    const zipped = await fetch(`${gateway.url}/ui/${script}`, { headers: { "accept-encoding": "gzip" } })
    expect(zipped.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    // fetch undoes the gzip: the same text, and the header says it came zipped
    expect(zipped.headers.get("content-encoding")).toBe("gzip")
    expect(await zipped.text()).toBe(fs.readFileSync(path.join(repoRoot, "dist/ui", script), "utf8"))
    const missing = await rawRequest(`${gateway.url}/ui/assets/nothing-here.js`)
    expect(missing.status).toBe(404)
    const traversal = await rawRequest(`${gateway.url}/ui/..%2f..%2fpackage.json`)
    expect(traversal.text).not.toContain('"dependencies"')
  })

  it("answers the configuration as loaded, template sources included and no secret", async () => {
    const response = await gateway.get("/v1/ui/config")
    expect(response.status).toBe(200)
    const config = response.body
    const haiku = config.functions.find((fn: any) => fn.name === "haiku")
    expect(haiku.type).toBe("chat")
    expect(haiku.builtin).toBe(false)
    expect(haiku.schemas.user.properties.topic).toEqual({ type: "string" })
    expect(haiku.tools).toEqual(["get_weather"])
    expect(haiku.variants.map((variant: any) => [variant.name, variant.model, variant.weight])).toEqual([["echo", "dummy::streamed_echo", 1], ["fixed", "dummy::hello", 1]])
    expect(haiku.variants[0].templates.user.trim()).toBe("Write a haiku about {{ topic }}.")
    expect(haiku.evaluators.map((evaluator: any) => [evaluator.name, evaluator.type, evaluator.settings])).toEqual([
      ["mentions_haiku", "regex", { must_match: "haiku" }],
      ["matches_reference", "exact_match", {}]
    ])
    expect(config.functions.some((fn: any) => fn.builtin && fn.name.startsWith("gateway::"))).toBe(true)
    expect(config.metrics.map((metric: any) => metric.name).sort()).toEqual(expect.arrayContaining(["haiku_rating", "quality", "task_success"]))
    expect(config.tools).toEqual([expect.objectContaining({ name: "get_weather", description: "The weather in a city" })])
    const model = config.models.find((m: any) => m.name === "my_model")
    expect(model.routing).toEqual(["broken", "working"])
    const secret = config.models.find((m: any) => m.name === "secret_model").providers[0]
    expect(secret.credential).toBe("configured")
    expect(secret.settings.extra_headers).toEqual(["x-team-token"])
    const text = JSON.stringify(config)
    expect(text).not.toContain("sk-very-secret-key")
    expect(text).not.toContain("team-secret-value")
  })
})

describe("the web UI under base_path, and turned off", () => {
  it("serves the page under the base path with a <base> there", async () => {
    const gateway = await startGateway({ config: `[gateway]\nbase_path = "/llm"\n` })
    try {
      const response = await rawRequest(`${gateway.url}/llm/ui/evaluations`)
      expect(response.status).toBe(200)
      expect(response.text).toContain('<base href="/llm/ui/">')
      expect((await rawRequest(`${gateway.url}/ui/`)).status).toBe(404)
    } finally {
      await gateway.stop()
    }
  })

  it("has no /ui with [gateway.ui] enabled = false", async () => {
    const gateway = await startGateway({ config: `[gateway.ui]\nenabled = false\n` })
    try {
      const response = await rawRequest(`${gateway.url}/ui/`)
      expect(response.status).toBe(404)
    } finally {
      await gateway.stop()
    }
  })
})
