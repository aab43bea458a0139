/**
 * Every page of the UI in a real browser (Chromium), on a gateway with seeded data and no
 * authentication: it loads without console errors or failed requests, axe-core finds no WCAG A/AA
 * violation, and a screenshot at a desktop and a narrow width lands in test-artifacts/ui/.
 */
import type { Browser } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite } from "../support/uiGateway.ts"

describe("every page of the UI", () => {
  let gateway: UiGateway
  let browser: Browser
  /** what the pages with an id show: a datapoint of "seeded", an evaluation run, a workflow evaluation run */
  let datapointId: string
  let evaluationRunId: string
  let workflowRunId: string

  uiSuite({}, (started) => ({ gateway, browser } = started))
  beforeAll(async () => {
    const datapoints = await gateway.gateway.post("/v1/datasets/seeded/list_datapoints", { limit: 1 })
    datapointId = datapoints.body.datapoints[0].id
    // the stream ends when the run does
    await gateway.gateway.stream("/v1/evaluations/run", { function_name: "haiku", dataset_name: "seeded", variant_name: "echo" })
    evaluationRunId = (await gateway.gateway.get("/v1/evaluations/runs?function_name=haiku")).body.runs[0].run_id
    const workflow = await gateway.gateway.post("/workflow_evaluation_run", { variants: { haiku: "fixed" }, display_name: "pages" })
    workflowRunId = workflow.body.run_id
  }, 120_000)

  const pages = () => {
    const first = gateway.seeded[0]
    return [
      { name: "overview", path: "/", heading: "Overview" },
      { name: "inferences", path: "/inferences", heading: "Inferences" },
      { name: "inference", path: `/inferences/${first.inferenceId}`, heading: "Inference" },
      { name: "episode", path: `/episodes/${first.episodeId}`, heading: "Episode" },
      { name: "datasets", path: "/datasets", heading: "Datasets" },
      { name: "dataset", path: "/datasets/seeded", heading: "seeded" },
      { name: "datapoint", path: `/datasets/seeded/datapoints/${datapointId}`, heading: "Datapoint" },
      { name: "evaluations", path: "/evaluations", heading: "Evaluations" },
      { name: "evaluation-run", path: `/evaluations/runs/${evaluationRunId}`, heading: "Evaluation run" },
      { name: "workflow-run", path: `/evaluations/workflow/${workflowRunId}`, heading: "Workflow evaluation run" },
      { name: "optimization", path: "/optimization", heading: "Optimization" },
      { name: "playground", path: "/playground", heading: "Playground" },
      { name: "configuration", path: "/configuration", heading: "Configuration" },
      { name: "api-keys", path: "/api-keys", heading: "API keys" },
      { name: "audit", path: "/audit", heading: "Audit log" },
      { name: "budgets", path: "/budgets", heading: "Budgets" },
      { name: "spend", path: "/spend", heading: "Spend" }
    ]
  }

  for (const [width, viewport] of Object.entries(widths)) {
    it(`loads each page at the ${width} width without errors, accessible, and photographs it`, async () => {
      const { page, context, problems } = await watchedPage(browser, viewport)
      try {
        for (const { name, path, heading } of pages()) {
          await page.goto(`${gateway.ui}${path}`)
          await page.getByRole("heading", { level: 1 }).filter({ hasText: heading }).first().waitFor({ timeout: 15_000 })
          await page.waitForLoadState("networkidle")
          expect(problems, `${path}: ${problems.join("\n")}`).toEqual([])
          expect(await accessibilityViolations(page), path).toEqual([])
          await screenshot(page, `${name}-${width}`)
        }
      } finally {
        await context.close()
      }
    }, 120_000)
  }

  it("moves with the keyboard: skip link, the navigation's links, then into a table and out by a row's link", async () => {
    const { page, context } = await watchedPage(browser)
    try {
      await page.goto(gateway.ui)
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.activeElement.textContent.trim()")).toBe("Skip to content")
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.activeElement.textContent")).toBe("Overview")
      await page.keyboard.press("Tab")
      await page.keyboard.press("Enter")
      await page.getByRole("heading", { level: 1, name: "Inferences" }).waitFor()
      expect(new URL(page.url()).pathname).toBe("/ui/inferences")

      // the table: its scrolling region takes the focus, then the first row's link, which Enter opens
      const table = page.getByRole("region", { name: "Inferences, newest first" })
      await table.locator("tbody tr a").first().waitFor()
      let tabs = 0
      while ((await page.evaluate("document.activeElement?.getAttribute('aria-label') ?? ''")) !== "Inferences, newest first") {
        await page.keyboard.press("Tab")
        if (++tabs > 60) throw new Error("the table is not reachable with Tab")
      }
      await page.keyboard.press("Tab")
      const link = String(await page.evaluate("document.activeElement.getAttribute('href')"))
      expect(link).toMatch(/^\/ui\/inferences\/[0-9a-f-]{36}$/)
      await page.keyboard.press("Enter")
      await page.getByRole("heading", { level: 1, name: "Inference" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(link)
    } finally {
      await context.close()
    }
  })
})
