/**
 * The Configuration page in a real browser (Chromium), authentication off: haiku's variants with
 * their template sources once unfolded, its schema and evaluators, the metrics, the tool, the
 * model with its two providers in routing order; the table of contents scrolls within the page;
 * no console errors or failed requests, no axe-core violation, screenshots at two widths.
 */
import type { Browser, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite } from "../support/uiGateway.ts"

/** the cells of the rows of the table captioned `caption` */
const tableRows = (page: Page, caption: string): Promise<Array<Array<string>>> =>
  page.locator("table", { has: page.locator("caption", { hasText: caption }) }).first().locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => [...row.querySelectorAll("td")].map((cell) => (cell.textContent ?? "").trim()))
  )

describe("the Configuration page", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ inferences: 1 }, (started) => ({ gateway, browser } = started))

  it("shows functions with their variants' templates, metrics, tools and models as loaded", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/configuration`)
      await page.getByRole("heading", { level: 1, name: "Configuration" }).waitFor()
      const haiku = page.getByRole("article", { name: /^haiku/ })
      await haiku.waitFor()
      expect(await haiku.getByText("Writes a haiku about a topic").isVisible()).toBe(true)

      // the variants are folded; unfolded, each shows its template sources
      const template = haiku.locator("figure.template pre", { hasText: "Write a haiku about {{ topic }}." })
      expect(await template.count()).toBe(2)
      expect(await template.first().isVisible()).toBe(false)
      for (const name of ["echo", "fixed"]) {
        const variant = haiku.locator("details", { has: page.locator("summary", { hasText: new RegExp(`^${name} chat_completion`) }) })
        await variant.locator("summary").click()
        const source = variant.locator("figure.template", { hasText: "Template user" }).locator("pre")
        expect((await source.textContent())?.trim()).toBe("Write a haiku about {{ topic }}.")
        expect(await source.isVisible()).toBe(true)
        expect(await variant.getByText(`dummy::${name === "echo" ? "streamed_echo" : "hello"}`).first().isVisible()).toBe(true)
      }
      // the schema of the user template's arguments, and the evaluators
      await haiku.locator("summary", { hasText: "Schema of the user template's arguments" }).click()
      expect(await haiku.locator("pre.json", { hasText: '"topic"' }).isVisible()).toBe(true)
      expect((await tableRows(page, "Evaluators of haiku")).map((row) => row.slice(0, 2))).toEqual([["mentions_haiku", "regex"], ["matches_reference", "exact_match"]])

      const metrics = await tableRows(page, "Metrics")
      expect(metrics.map((row) => row.slice(0, 4))).toEqual(expect.arrayContaining([
        ["haiku_rating", "boolean", "inference", "max"],
        ["quality", "float", "inference", "max"],
        ["task_success", "boolean", "episode", "max"]
      ]))

      const tool = page.getByRole("article", { name: "get_weather" })
      expect(await tool.getByText("The weather in a city").isVisible()).toBe(true)
      await tool.locator("summary", { hasText: "Parameters" }).click()
      expect(await tool.getByText('"city"').first().isVisible()).toBe(true)

      const model = page.getByRole("article", { name: "my_model" })
      expect(await model.getByText("Routing: broken → working").isVisible()).toBe(true)
      expect((await tableRows(page, "Providers of my_model")).map((row) => row.slice(0, 3))).toEqual([
        ["broken", "dummy", "error"],
        ["working", "dummy", "json"]
      ])

      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "configuration-unfolded-desktop")

      // the table of contents moves within the page (as far as the page scrolls)
      const inView = (id: string) => `(() => { const top = document.getElementById('${id}').getBoundingClientRect().top; return top >= 0 && top < innerHeight - 100 })()`
      await page.evaluate("scrollTo(0, 0)")
      expect(await page.evaluate(inView("metrics"))).toBe(false)
      await page.getByRole("navigation", { name: "On this page" }).getByRole("link", { name: "Metrics" }).click()
      await expect.poll(() => page.evaluate("location.hash")).toBe("#metrics")
      expect(new URL(page.url()).pathname).toBe("/ui/configuration")
      expect(await page.getByRole("heading", { level: 1, name: "Configuration" }).isVisible()).toBe(true)
      expect(await page.evaluate(inView("metrics"))).toBe(true)
      // a link from a function to its tool
      await haiku.getByRole("link", { name: "get_weather" }).click()
      await expect.poll(() => page.evaluate("location.hash")).toBe("#tool-get_weather")

      // opened at a fragment, the page scrolls there once loaded
      await page.goto("about:blank")
      await page.goto(`${gateway.ui}/configuration#model-my_model`)
      await model.waitFor()
      // (evaluated through the debugging protocol: the page's Content-Security-Policy refuses waitForFunction's eval)
      await expect.poll(() => page.evaluate(`scrollY > 0 && ${inView("model-my_model")}`)).toBe(true)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  for (const [width, viewport] of Object.entries(widths)) {
    it(`is accessible and photographed at the ${width} width`, async () => {
      const { page, context, problems } = await watchedPage(browser, viewport)
      try {
        await page.goto(`${gateway.ui}/configuration`)
        await page.getByRole("article", { name: /^haiku/ }).waitFor()
        expect(await accessibilityViolations(page)).toEqual([])
        await screenshot(page, `configuration-${width}`)
        expect(problems).toEqual([])
      } finally {
        await context.close()
      }
    })
  }
})
