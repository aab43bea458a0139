/**
 * The Spend page in a real browser (Chromium) on a gateway (the embedded database, authentication
 * off: the page's caller is a global admin of `default`) whose model is served by the fake OpenAI
 * with `cost` rules on its provider: inferences tagged team red and blue, their stored costs
 * summed on the page per day, week and month, for the whole workspace and for a tag; the chart
 * drawn, the periods as a table; no console errors or failed requests, no axe-core violation.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accessibilityViolations, launchBrowser, screenshot, watchedPage } from "../support/browser.ts"
import { completion, type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { waitForInferences } from "../support/observability.ts"

const config = (apiBase: string) => `
[gateway]
bind_address = "127.0.0.1:0"
[gateway.observability]
batch_writes = { flush_interval_ms = 50 }

[models.priced]
routing = ["p"]
[models.priced.providers.p]
type = "openai"
model_name = "gpt-priced"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"
cost = [
  { pointer = "/usage/prompt_tokens", cost_per_million = 1000, required = true },
  { pointer = "/usage/completion_tokens", cost_per_unit = 0.01, required = true },
]

[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "priced"
`

/** the cells of the rows of the table captioned `caption` */
const tableRows = (page: Page, caption: string): Promise<Array<Array<string>>> =>
  page.locator("table", { has: page.locator("caption", { hasText: caption }) }).first().locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => [...row.querySelectorAll("td")].map((cell) => (cell.textContent ?? "").trim()))
  )

/** [tag, prompt tokens, completion tokens]: each costs prompt / 1000 + completion / 100 */
const calls: ReadonlyArray<readonly [string, number, number]> = [["red", 1000, 25], ["red", 2000, 50], ["blue", 500, 0]]
const costOf = ([, prompt, completion]: readonly [string, number, number]) => prompt / 1000 + completion / 100
const red = calls.filter(([tag]) => tag === "red").reduce((sum, call) => sum + costOf(call), 0)
const all = calls.reduce((sum, call) => sum + costOf(call), 0)

describe("the Spend page", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let browser: Browser
  let folder: string

  beforeAll(async () => {
    folder = fs.mkdtempSync(path.join(process.env.GATEWAY_TEST_SCRATCH ?? "/tmp", "ui-spend-"))
    ;[fake, browser] = await Promise.all([startFakeOpenAi(), launchBrowser()])
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: { GATEWAY_ANALYTICS_DB_URL: `pglite://${folder}`, GATEWAY_RELATIONAL_DB_URL: `pglite://${folder}`, FAKE_OPENAI_KEY: "sk-fake" },
      startTimeoutMs: 60_000
    })
    const ids: Array<string> = []
    for (const [i, [team, prompt, completionTokens]] of calls.entries()) {
      fake.script.push({ kind: "json", body: completion({ content: "Hello" }, { usage: { prompt_tokens: prompt, completion_tokens: completionTokens } }) })
      const answer = await gateway.post("/inference", { function_name: "chat", input: { messages: [{ role: "user", content: `hi ${i}` }] }, tags: { team } })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.usage.cost).toBeCloseTo(costOf(calls[i]), 12)
      ids.push(answer.body.inference_id)
    }
    await waitForInferences(gateway, ids, { include_model_inferences: true, timeoutMs: 30_000 })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await gateway?.stop()
    await fake?.close()
    if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true })
  })

  it("shows the stored costs per period, for the workspace and for a tag, with a chart and a total", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.url}/ui/`)
      await page.getByRole("link", { name: "Spend" }).click()
      await page.getByRole("heading", { level: 1, name: "Spend" }).waitFor()
      const total = page.getByTestId("spend-total")
      await total.waitFor()
      expect(Number(await total.textContent())).toBeCloseTo(all, 6)
      const chart = page.getByRole("img", { name: /Spend per day of workspace default .* in 3 calls\./ })
      expect(await chart.count()).toBe(1)
      expect(await chart.locator("canvas").count()).toBeGreaterThan(0)
      const today = new Date().toISOString().slice(0, 10)
      await page.getByText("The chart's data as a table").click()
      const days = await tableRows(page, "Spend per day")
      expect(days).toHaveLength(1)
      expect(days[0][0]).toBe(today)
      expect(Number(days[0][1])).toBeCloseTo(all, 6)
      expect(days[0][2]).toBe("3")
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "spend-desktop")

      // per month, then one tag's
      await page.getByLabel("Per", { exact: true }).selectOption("month")
      await page.getByRole("img", { name: /Spend per month of workspace default/ }).waitFor()
      expect((await tableRows(page, "Spend per month"))[0][0]).toBe(today.slice(0, 7))
      await page.getByLabel("Scope", { exact: true }).selectOption("tag")
      await page.getByText("Name the tag's key and value to read its spend.").waitFor()
      await page.getByLabel("Tag key", { exact: true }).fill("team")
      await page.getByLabel("Tag value", { exact: true }).fill("red")
      await page.getByRole("img", { name: /Spend per month of tag team = red .* in 2 calls\./ }).waitFor()
      expect(Number(await total.textContent())).toBeCloseTo(red, 6)
      await page.getByLabel("Per", { exact: true }).selectOption("week")
      await page.getByRole("img", { name: /Spend per week of tag team = red/ }).waitFor()
      const weeks = await tableRows(page, "Spend per week")
      expect(new Date(`${weeks[0][0]}T00:00:00Z`).getUTCDay()).toBe(1)
      expect(Number(weeks[0][1])).toBeCloseTo(red, 6)
      expect(problems, problems.join("\n")).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)
})
