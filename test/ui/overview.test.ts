/**
 * The Overview page in a real browser (Chromium) on a gateway with seeded data (12 haiku
 * inferences split between the variants echo and fixed, one extract_greeting inference, 6
 * haiku_rating ratings): the counts by function, then by variant once haiku is picked, the
 * feedback per variant, the chart's text alternative, the models; a range without inferences
 * empties it; no console errors or failed requests, no axe-core violation, screenshots at a
 * desktop and a narrow width.
 */
import type { Browser, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite, until } from "../support/uiGateway.ts"

/** the cells of the rows of the table captioned `caption` */
const tableRows = (page: Page, caption: string): Promise<Array<Array<string>>> =>
  page.locator("table", { has: page.locator("caption", { hasText: caption }) }).first().locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => [...row.querySelectorAll("td")].map((cell) => (cell.textContent ?? "").trim()))
  )

describe("the Overview page", () => {
  let gateway: UiGateway
  let browser: Browser
  /** inferences of haiku by variant, as the gateway stored them (the split is drawn at random) */
  let split: Record<string, number>

  uiSuite({}, (started) => ({ gateway, browser } = started))
  beforeAll(async () => {
    // the seeded ratings are written after their answers, by the write queue
    await until(async () => {
      const response = await fetch(`${gateway.url}/v1/ui/overview?function_name=haiku`)
      const body = await response.json() as any
      split = Object.fromEntries(body.series.map((series: any) => [series.name, series.total]))
      return body.metrics[0]?.variants.reduce((sum: number, variant: any) => sum + variant.count, 0) === 6
    })
  }, 120_000)

  it("shows the counts by function, then by variant with feedback once a function is picked, and follows the range", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/`)
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      await page.locator("caption", { hasText: "Inferences by function" }).waitFor()
      expect(await tableRows(page, "Inferences by function")).toEqual([
        ["haikuinferences", "12", expect.stringMatching(/^92\.3%$/)],
        ["extract_greetinginferences", "1", expect.stringMatching(/^7\.7%$/)]
      ])
      expect(await page.getByRole("img", { name: /13 in all/ }).count()).toBe(1)

      // pick haiku: by variant now, in the address too
      await page.getByLabel("Function", { exact: true }).selectOption("haiku")
      await page.locator("caption", { hasText: "Inferences of haiku by variant" }).waitFor()
      expect(new URL(page.url()).searchParams.get("function_name")).toBe("haiku")
      const variants = await tableRows(page, "Inferences of haiku by variant")
      expect(Object.fromEntries(variants.map(([name, count]) => [name, Number(count)]))).toEqual(split)
      expect(Object.keys(split).every((name) => ["echo", "fixed"].includes(name))).toBe(true)
      const chart = page.getByRole("img", { name: /Inferences per hour by variant .* 12 in all/ })
      expect(await chart.count()).toBe(1)
      expect(await chart.locator("canvas").count()).toBeGreaterThan(0)
      expect(await page.getByRole("link", { name: variants[0][0] }).first().getAttribute("href")).toBe(`/ui/inferences?function_name=haiku&variant_name=${variants[0][0]}`)

      // the ratings: 6 in all, 3 of them true
      const ratings = await tableRows(page, "haiku_rating: boolean, inference-level, higher is better; means with 95% Wilson score intervals")
      expect(ratings.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(6)
      expect(ratings.every((row) => /^\d\.\d{3} – \d\.\d{3}$/.test(row[3]))).toBe(true)
      const models = await tableRows(page, "Model calls by model and provider")
      expect(models.reduce((sum, row) => sum + Number(row[2]), 0)).toBe(12)

      // the chart's numbers as a table
      await page.getByText("The chart's data as a table").click()
      const buckets = await tableRows(page, "Inferences per hour by variant")
      expect(buckets.reduce((sum, row) => sum + row.slice(1).reduce((a, b) => a + Number(b), 0), 0)).toBe(12)

      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "overview-chart-desktop")

      // the last hour holds them all; a custom range in 2020 holds none
      await page.getByLabel("Time range", { exact: true }).selectOption("hour")
      await page.getByRole("img", { name: /Inferences per minute by variant .* 12 in all/ }).waitFor()
      await page.getByLabel("Time range", { exact: true }).selectOption("custom")
      await page.getByLabel("From (local time)", { exact: true }).fill("2020-01-01T00:00")
      await page.getByLabel("To (local time)", { exact: true }).fill("2020-01-01T06:00")
      await page.getByRole("button", { name: "Apply range" }).click()
      await page.getByText(/Inferences per hour from 2020-01-0\d .* none\./).waitFor()
      expect(await tableRows(page, "Inferences of haiku by variant")).toEqual([["No inferences in this range."]])
      await page.getByText("No feedback on this function's inferences in the range.").waitFor()
      expect(new URL(page.url()).searchParams.get("range")).toBe("custom")

      // a start after the end is refused on the page, before asking
      await page.getByLabel("From (local time)", { exact: true }).fill("2020-01-02T00:00")
      await page.getByRole("button", { name: "Apply range" }).click()
      await page.getByRole("alert").filter({ hasText: "The start of the range must be before its end." }).waitFor()
      expect(await accessibilityViolations(page)).toEqual([])
      expect(problems, problems.join("\n")).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it("fits a narrow screen, accessible", async () => {
    const { page, context, problems } = await watchedPage(browser, widths.narrow)
    try {
      await page.goto(`${gateway.ui}/?function_name=haiku`)
      await page.locator("caption", { hasText: "Inferences of haiku by variant" }).waitFor()
      await page.getByRole("img", { name: /12 in all/ }).waitFor()
      const width = await page.evaluate("document.documentElement.scrollWidth")
      expect(width).toBeLessThanOrEqual(widths.narrow.width)
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "overview-chart-narrow")
      expect(problems, problems.join("\n")).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)
})
