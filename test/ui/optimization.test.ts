/**
 * Optimization in a real browser, on a gateway (embedded database) whose models are the GEPA
 * tests' fakes (test/support/gepaFakes.ts: the task model complies only when its system prompt
 * holds MAGIC, the mutator writes such a template). A GEPA task launched from the form shows its
 * progress while it runs, then its scores, the new variant's template and the configuration files,
 * which download as `gateway optimize export` writes them; the task is listed on the Optimization
 * page. A slow task is cancelled from its page. The export route's 404 and 409s. No console
 * errors, no axe violations, screenshots.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accessibilityViolations, launchBrowser, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"

describe("Optimization: GEPA from the UI", () => {
  let fake: GepaFakeModels
  let gateway: RunningGateway
  let browser: Browser
  let folder: string

  beforeAll(async () => {
    folder = fs.mkdtempSync(path.join(process.env.GATEWAY_TEST_SCRATCH ?? "/tmp", "ui-gepa-db-"))
    const databaseUrl = `pglite://${folder}`
    ;[fake, browser] = await Promise.all([startGepaFakeModels(), launchBrowser()])
    gateway = await startGateway({
      config: gepaConfig(fake.apiBase),
      files: gepaFiles,
      env: { GATEWAY_ANALYTICS_DB_URL: databaseUrl, GATEWAY_RELATIONAL_DB_URL: databaseUrl }
    })
    const created = await gateway.post("/v1/datasets/words/datapoints", {
      datapoints: wordDatapoints(["apple", "banana", "cherry", "damson", "elder", "fig"])
    })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await gateway?.stop()
    await fake?.close()
    if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true })
  })

  const checked = async (page: Page, name: string, problems: Array<string>) => {
    expect(problems, problems.join("\n")).toEqual([])
    expect(await accessibilityViolations(page), name).toEqual([])
    await screenshot(page, `${name}-desktop`)
    await page.setViewportSize(widths.narrow)
    expect(await accessibilityViolations(page), `${name} (narrow)`).toEqual([])
    await screenshot(page, `${name}-narrow`)
    await page.setViewportSize(widths.desktop)
  }

  it("launches GEPA from the form, follows its progress, shows the new variant and downloads its configuration", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      // slow enough answers that the task is seen running
      fake.delayMs = 400
      await page.goto(`${gateway.url}/ui/optimization`)
      await page.getByRole("heading", { level: 1, name: "Optimization" }).waitFor()
      await page.getByLabel("Function", { exact: true }).selectOption("echo")
      await page.getByLabel("Iterations", { exact: true }).fill("1")
      await page.getByLabel("Dataset", { exact: true }).selectOption("words")
      await page.getByLabel(/^exact \(exact_match, max\)/).check()
      await page.getByLabel("Analysis model", { exact: true }).fill("analyst")
      await page.getByLabel("Mutation model", { exact: true }).fill("mutator")
      await page.getByText("More settings").click()
      await page.getByLabel("base", { exact: true }).check()
      await page.getByLabel("Variant prefix", { exact: true }).fill("evolved")
      await page.getByLabel("Seed", { exact: true }).fill("7")
      await checked(page, "optimization-form", problems)
      await page.getByRole("button", { name: "Launch" }).click()

      await page.getByRole("heading", { level: 1, name: "GEPA task" }).waitFor()
      const taskId = new URL(page.url()).pathname.split("/").at(-1)!
      expect(taskId).toMatch(/^[0-9a-f-]{36}$/)
      await page.getByRole("progressbar", { name: "Iterations done" }).waitFor({ timeout: 15_000 })
      await expect(page.getByText(/^Iteration \d of 1: /).innerText()).resolves.toMatch(/^Iteration \d of 1: [a-z ]+$/)
      await page.getByRole("button", { name: "Cancel the task" }).waitFor()
      await screenshot(page, "gepa-task-pending-desktop")

      await page.getByRole("status").getByText("completed").waitFor({ timeout: 60_000 })
      fake.delayMs = 20
      expect(await page.getByRole("button", { name: "Cancel the task" }).count()).toBe(0)
      const scores = page.getByRole("table", { name: "Scores on the validation set" })
      await expect(scores.getByRole("row").filter({ hasText: "evolved_1" }).innerText()).resolves.toMatch(/new\s+1 ± 0 \(n=3\)/)
      await expect(scores.getByRole("row").filter({ hasText: "base" }).innerText()).resolves.toMatch(/initial\s+0 ± 0 \(n=3\)/)
      const variant = page.getByRole("region", { name: "evolved_1" })
      await expect(variant.getByLabel("template system of evolved_1").innerText()).resolves.toContain("MAGIC")

      // the files, each downloaded
      const templatePath = "echo/evolved_1/system.minijinja"
      await page.getByRole("button", { name: `Download ${templatePath}` }).waitFor()
      const downloaded: Record<string, string> = {}
      for (const file of ["gateway.toml", templatePath]) {
        const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: `Download ${file}` }).click()])
        downloaded[download.suggestedFilename()] = fs.readFileSync((await download.path())!, "utf8")
      }
      expect(Object.keys(downloaded)).toEqual(["gateway.toml", "system.minijinja"])
      expect(downloaded["gateway.toml"]).toContain("[functions.echo.variants.evolved_1]")
      expect(downloaded["gateway.toml"]).toContain(`path = "${templatePath}"`)
      expect(downloaded["system.minijinja"]).toContain("MAGIC")
      // the same files as the route answers
      const exported = await gateway.get(`/v1/ui/optimization/gepa/${taskId}/export`)
      expect(exported.status).toBe(200)
      expect(exported.body).toMatchObject({ task_id: taskId, function_name: "echo", variants: 1 })
      expect(exported.body.files).toEqual([
        { path: "gateway.toml", content: downloaded["gateway.toml"] },
        { path: templatePath, content: downloaded["system.minijinja"] }
      ])
      await checked(page, "gepa-task-completed", problems)

      // listed on the Optimization page (this browser launched it)
      await page.getByRole("link", { name: "All optimization tasks" }).click()
      const row = page.getByRole("table", { name: "GEPA tasks launched from this browser" }).getByRole("row").filter({ hasText: taskId })
      await row.getByText("completed: 1 new variants").waitFor()
      expect(await row.innerText()).toContain("echo")
      await checked(page, "optimization-tasks", problems)
    } finally {
      fake.delayMs = 20
      await context.close()
    }
  }, 120_000)

  it("cancels a running task from its page; the export answers 409 until a task completes, 404 for an unknown one", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      fake.delayMs = 3000
      const launched = await gateway.post("/v1/optimization/gepa", {
        function_name: "echo", analysis_model: "analyst", mutation_model: "mutator", dataset_name: "words", evaluators: ["exact"], max_iterations: 5
      })
      expect(launched.status, JSON.stringify(launched.body)).toBe(200)
      const taskId: string = launched.body.task_id
      const pending = await gateway.get(`/v1/ui/optimization/gepa/${taskId}/export`)
      expect(pending.status).toBe(409)
      expect(pending.body.error).toMatch(/still running: nothing to export/)

      await page.goto(`${gateway.url}/ui/optimization/gepa/${taskId}`)
      await page.getByRole("status").getByText("pending").waitFor()
      await page.getByRole("button", { name: "Cancel the task" }).click()
      await page.getByRole("status").getByText("error").waitFor()
      await expect(page.getByRole("alert").innerText()).resolves.toBe("cancelled")
      expect(await page.getByRole("button", { name: "Cancel the task" }).count()).toBe(0)
      expect(problems, problems.join("\n")).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "gepa-task-cancelled-desktop")

      const cancelled = await gateway.get(`/v1/ui/optimization/gepa/${taskId}/export`)
      expect(cancelled.status).toBe(409)
      expect(cancelled.body.error).toMatch(/in error: cancelled/)
      const unknown = await gateway.get("/v1/ui/optimization/gepa/0196b5c0-0000-7000-8000-000000000000/export")
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatch(/unknown GEPA task/)
    } finally {
      fake.delayMs = 20
      await context.close()
    }
  }, 60_000)
})
