/**
 * The Evaluations pages in a real browser (Chromium) on the UI's seeded gateway: haiku's two
 * variants run on the dataset "seeded" from the form, filled and submitted with the keyboard
 * alone, their progress followed to the end, then compared side by side per evaluator and per
 * datapoint (dummy::streamed_echo answers the rendered prompt, "Write a haiku about ...", so
 * mentions_haiku holds for echo; dummy::hello answers a fixed text without the word, so it never
 * does for fixed); the runs list's selection opening the same comparison; a workflow evaluation
 * run created through the public API with an episode, an inference and feedback, on its page.
 * No console errors or failed requests, no axe-core violation, screenshots in test-artifacts/ui/.
 */
import type { Browser, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite, until } from "../support/uiGateway.ts"

const dummyText = "Hello from the dummy provider. This answer is always the same."

/** presses Tab until the focused element's label reads `label` */
const tabTo = async (page: Page, label: string | RegExp) => {
  for (let tabs = 0; tabs < 60; tabs++) {
    await page.keyboard.press("Tab")
    const focused = await page.evaluate(
      "(() => { const e = document.activeElement; return e?.labels?.[0]?.textContent ?? e?.getAttribute('aria-label') ?? e?.textContent ?? '' })()"
    ) as string
    if (typeof label === "string" ? focused.trim() === label : label.test(focused.trim())) return
  }
  throw new Error(`${label} is not reachable with Tab`)
}

describe("the evaluation pages", () => {
  let ui: UiGateway
  let browser: Browser
  /** the two runs of the first test: echo's, then fixed's */
  let runIds: ReadonlyArray<string> = []

  uiSuite({}, (started) => ({ gateway: ui, browser } = started))

  it("runs echo and fixed on the dataset from the form with the keyboard, follows the progress, and compares them", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${ui.ui}/evaluations`)
      await page.getByRole("heading", { level: 1, name: "Evaluations" }).waitFor()
      await page.getByLabel("Function", { exact: true }).waitFor()

      // the keyboard alone: a select takes the typed name, a checkbox Space, the form Enter
      await tabTo(page, "Function")
      await page.keyboard.type("haiku")
      await tabTo(page, "Dataset")
      await page.keyboard.type("seeded")
      expect(await page.getByLabel("Dataset", { exact: true }).inputValue()).toBe("seeded")
      await tabTo(page, "Concurrency")
      await page.keyboard.press("Control+A")
      await page.keyboard.type("2")
      await tabTo(page, /^echo \(/)
      await page.keyboard.press("Space")
      await tabTo(page, /^fixed \(/)
      await page.keyboard.press("Space")
      // every evaluator of the function is checked from the start
      expect(await page.getByLabel(/^mentions_haiku \(/).isChecked()).toBe(true)
      expect(await page.getByLabel(/^matches_reference \(/).isChecked()).toBe(true)
      await tabTo(page, "Run 2 evaluations")
      await page.keyboard.press("Enter")

      const progress = page.getByRole("region", { name: "Progress of the runs" })
      await progress.getByRole("status").getByText("Finished: 2 of 2 runs completed.").waitFor({ timeout: 30_000 })
      for (const variant of ["echo", "fixed"]) {
        const bar = progress.getByLabel(new RegExp(`^${variant}: `))
        expect([await bar.getAttribute("value"), await bar.getAttribute("max")]).toEqual(["4", "4"])
        await progress.getByText(`${variant}: 4 of 4 datapoints`).waitFor()
      }
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "evaluations-run-finished-desktop")

      // the runs as the gateway stored them: echo always mentions haiku, fixed never
      const listed = await ui.gateway.get("/v1/evaluations/runs?function_name=haiku")
      expect(listed.status).toBe(200)
      const runs = listed.body.runs as Array<any>
      const echo = runs.find((run) => run.variant_name === "echo")
      const fixed = runs.find((run) => run.variant_name === "fixed")
      expect([echo.status, echo.completed, fixed.status, fixed.completed]).toEqual(["completed", 4, "completed", 4])
      expect([echo.summary.mentions_haiku.mean, fixed.summary.mentions_haiku.mean]).toEqual([1, 0])
      // the references are the seeded inferences' outputs, each from echo or fixed: every datapoint matches exactly one of them
      expect(echo.summary.matches_reference.count + fixed.summary.matches_reference.count).toBe(8)
      expect(echo.summary.matches_reference.mean + fixed.summary.matches_reference.mean).toBeCloseTo(1)
      runIds = [echo.run_id, fixed.run_id]

      await page.getByRole("link", { name: "Compare these runs" }).click()
      await page.getByRole("heading", { level: 1, name: "Evaluation run" }).waitFor()
      expect(new URL(page.url()).searchParams.get("compare")).toBe(fixed.run_id)
      expect(new URL(page.url()).pathname).toBe(`/ui/evaluations/runs/${echo.run_id}`)

      // per evaluator, the two variants side by side
      const scores = page.getByRole("region", { name: "Scores by evaluator, one column per run" })
      await scores.locator("thead th").nth(2).waitFor()
      const headers = await scores.locator("thead th").allTextContents()
      expect(headers).toEqual(["Evaluator", expect.stringMatching(/^echo · /), expect.stringMatching(/^fixed · /)])
      const mentions = await scores.locator("tbody tr", { hasText: "mentions_haiku" }).locator("td").allTextContents()
      expect(mentions[1]).toMatch(/^1 ± 0 n=4 best$/)
      expect(mentions[2]).toMatch(/^0 ± 0 n=4$/)
      const references = await scores.locator("tbody tr", { hasText: "matches_reference" }).locator("td").allTextContents()
      expect(references[1]).toContain("n=4")
      expect(references[2]).toContain("n=4")

      // per datapoint, each variant's output and scores
      const datapoints = page.getByRole("region", { name: "Results per datapoint, one column per run" })
      await until(async () => (await datapoints.getByText("Output not stored yet…").count()) === 0)
      const rows = datapoints.locator("tbody tr")
      expect(await rows.count()).toBe(4)
      for (let i = 0; i < 4; i++) {
        const cells = rows.nth(i).locator("td")
        expect(await cells.nth(2).innerText()).toContain("Write a haiku about")
        expect(await cells.nth(2).innerText()).toContain("mentions_haiku: true")
        expect(await cells.nth(3).innerText()).toContain(dummyText)
        expect(await cells.nth(3).innerText()).toContain("mentions_haiku: false")
      }
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "evaluation-comparison-desktop")
      await page.setViewportSize(widths.narrow)
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "evaluation-comparison-narrow")
    } finally {
      await context.close()
    }
  }, 120_000)

  it("opens the comparison of runs checked in the runs list", async () => {
    expect(runIds).toHaveLength(2)
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${ui.ui}/evaluations`)
      const list = page.getByRole("region", { name: "Evaluation runs, newest first" })
      await list.locator("tbody tr").nth(1).waitFor()
      // fixed's first, so that the comparison's columns follow the checking order
      await list.getByLabel(/^Compare run .* \(fixed\)$/).check()
      await list.getByLabel(/^Compare run .* \(echo\)$/).check()
      expect(await list.locator("tbody tr", { hasText: "completed" }).count()).toBe(2)
      await page.getByRole("button", { name: "Compare 2 selected runs" }).click()
      await page.getByRole("heading", { level: 1, name: "Evaluation run" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/evaluations/runs/${runIds[1]}`)
      expect(new URL(page.url()).searchParams.get("compare")).toBe(runIds[0])
      const scores = page.getByRole("region", { name: "Scores by evaluator, one column per run" })
      await scores.locator("thead th").nth(2).waitFor()
      const headers = await scores.locator("thead th").allTextContents()
      expect(headers).toEqual(["Evaluator", expect.stringMatching(/^fixed · /), expect.stringMatching(/^echo · /)])
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("shows a workflow evaluation run with its variants, tags, episodes and metrics", async () => {
    const created = await ui.gateway.post("/workflow_evaluation_run", {
      variants: { haiku: "fixed" },
      project_name: "ui-tests",
      display_name: "nightly haiku",
      tags: { suite: "smoke" }
    }, ui.headers)
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const runId = created.body.run_id as string
    const episode = await ui.gateway.post(`/workflow_evaluation_run/${runId}/episode`, { task_name: "write-haiku" }, ui.headers)
    expect(episode.status, JSON.stringify(episode.body)).toBe(200)
    const episodeId = episode.body.episode_id as string
    const inference = await ui.gateway.post("/inference", {
      function_name: "haiku",
      episode_id: episodeId,
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { topic: "a lighthouse" } }] }] }
    }, ui.headers)
    expect(inference.status, JSON.stringify(inference.body)).toBe(200)
    expect(inference.body.variant_name).toBe("fixed")
    const feedback = await ui.gateway.post("/feedback", { metric_name: "task_success", episode_id: episodeId, value: true }, ui.headers)
    expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)

    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${ui.ui}/evaluations`)
      const list = page.getByRole("region", { name: "Workflow evaluation runs, newest first" })
      const row = list.locator("tbody tr", { hasText: "nightly haiku" })
      await row.waitFor()
      expect(await row.innerText()).toContain("suite=smoke")
      await row.getByRole("link").click()
      await page.getByRole("heading", { level: 1, name: "Workflow evaluation run" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/evaluations/workflow/${runId}`)
      await page.getByText(runId).waitFor()
      await page.getByText("ui-tests").waitFor()
      expect(await page.locator(".facts").innerText()).toMatch(/haiku\s*: fixed/)
      const episodes = page.getByRole("region", { name: "Episodes of the run, oldest first" })
      const episodeRow = episodes.locator("tbody tr")
      expect(await episodeRow.count()).toBe(1)
      expect(await episodeRow.innerText()).toContain("write-haiku")
      // the feedback lands through the write queue: the page is read again until it shows
      const metrics = page.getByRole("region", { name: "Feedback per metric on the run's episodes and their inferences" })
      await until(async () => {
        if ((await metrics.locator("tbody tr", { hasText: "task_success" }).count()) > 0) return true
        await page.reload()
        await metrics.waitFor()
        return false
      })
      expect(await metrics.locator("tbody tr", { hasText: "task_success" }).locator("td").allTextContents()).toEqual(["task_success", "1", "1"])
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "workflow-evaluation-run-desktop")

      // its episode opens the episode's page
      await episodeRow.getByRole("link").click()
      await page.getByRole("heading", { level: 1, name: "Episode" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/episodes/${episodeId}`)
      await page.getByText(dummyText).waitFor()
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)
})
