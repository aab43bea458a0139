/**
 * The Inferences, Inference and Episode pages in a real browser (Chromium) on the UI's seeded
 * gateway: finding inferences by tag with the keyboard, giving feedback (a metric, a comment, a
 * demonstration) and adding to a dataset from the page (checked through the public API too),
 * the episode's page, a json function's output; no console errors or failed requests, no axe-core
 * violation, screenshots in test-artifacts/ui/.
 */
import type { Browser, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite, until } from "../support/uiGateway.ts"

const inferenceRows = (page: Page) => page.getByRole("region", { name: "Inferences, newest first" }).locator("tbody tr")

describe("the inference pages", () => {
  let ui: UiGateway
  let browser: Browser

  uiSuite({}, (started) => ({ gateway: ui, browser } = started))

  it("finds bob's inferences by tag with the keyboard, gives feedback and adds one to a dataset, then shows its episode", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${ui.ui}/inferences`)
      await page.getByRole("heading", { level: 1, name: "Inferences" }).waitFor()
      // the 12 haiku inferences (the json one may land a moment later)
      await until(async () => (await inferenceRows(page).count()) >= 12)

      // the filter form with the keyboard alone: Tab to the tag field, type, Enter
      let tabs = 0
      while ((await page.evaluate("document.activeElement?.getAttribute('placeholder')")) !== "key=value") {
        await page.keyboard.press("Tab")
        if (++tabs > 40) throw new Error("the Tag field is not reachable with Tab")
      }
      await page.keyboard.type("user=bob")
      await page.keyboard.press("Enter")
      await until(async () => new URL(page.url()).searchParams.get("tag") === "user=bob")
      await until(async () => (await inferenceRows(page).count()) === 6)
      const tags = await inferenceRows(page).locator("td:last-child").allTextContents()
      expect(tags).toHaveLength(6)
      for (const cell of tags) expect(cell).toContain("user=bob")
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "inferences-filtered-desktop")

      // a link with the filter shows the same list
      await page.goto(`${ui.ui}/inferences?function_name=haiku&tag=${encodeURIComponent("user=bob")}`)
      await until(async () => (await inferenceRows(page).count()) === 6)
      expect(await page.getByLabel("Tag").inputValue()).toBe("user=bob")
      expect(await page.getByLabel("Function").inputValue()).toBe("haiku")

      // open one (bob's have no seeded feedback)
      await inferenceRows(page).first().getByRole("link").first().click()
      await page.getByRole("heading", { level: 1, name: "Inference" }).waitFor()
      const inferenceId = new URL(page.url()).pathname.split("/").pop()!
      const seeded = ui.seeded.find((inference) => inference.inferenceId === inferenceId)
      expect(seeded?.user).toBe("bob")
      await page.getByText(inferenceId).waitFor()
      await page.getByRole("heading", { name: "Model inferences" }).waitFor()
      await page.getByText("Raw request").click()
      expect(await page.getByLabel(/^raw request to /).isVisible()).toBe(true)

      // a metric, a comment, a demonstration (prefilled from the output)
      await page.getByLabel("Metric", { exact: true }).selectOption("haiku_rating")
      await page.getByLabel("Metric value").selectOption("true")
      await page.getByRole("button", { name: "Send metric" }).click()
      await page.getByText(/^Feedback .* sent\.$/).waitFor()
      await page.getByRole("textbox", { name: "Comment" }).fill("A fine haiku, from the browser")
      await page.getByRole("button", { name: "Send comment" }).click()
      await page.getByText(/^Comment .* sent\.$/).waitFor()
      expect((await page.getByRole("textbox", { name: "Demonstration" }).inputValue()).length).toBeGreaterThan(0)
      await page.getByRole("button", { name: "Send demonstration" }).click()
      await page.getByText(/^Demonstration .* sent\.$/).waitFor()
      // listed once stored (the page asks again until then)
      const table = page.getByRole("region", { name: "Feedback on this inference" })
      await table.getByText("A fine haiku, from the browser").waitFor({ timeout: 15_000 })
      await table.getByText("haiku_rating").waitFor()
      await table.getByText("demonstration").waitFor()
      const stored = await ui.gateway.post("/v1/inferences/get_inferences", { ids: [inferenceId], include_feedback: true })
      const feedback = stored.body.inferences[0].feedback.map((f: any) => [f.kind, f.metric_name, f.value])
      expect(feedback).toEqual(expect.arrayContaining([
        ["boolean", "haiku_rating", true],
        ["comment", "comment", "A fine haiku, from the browser"],
        ["demonstration", "demonstration", expect.anything()]
      ]))

      // into a dataset
      await page.getByLabel("Dataset name").fill("from_browser")
      await page.getByRole("button", { name: "Add to dataset" }).click()
      await page.getByText(/^Added to from_browser as datapoint/).waitFor()
      const datapoints = await ui.gateway.post("/v1/datasets/from_browser/list_datapoints", {})
      expect(datapoints.status).toBe(200)
      expect(datapoints.body.datapoints.map((datapoint: any) => datapoint.source_inference_id)).toEqual([inferenceId])

      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "inference-with-feedback-desktop")

      // its episode: the inference with its feedback
      const episodeId = seeded!.episodeId
      await page.getByRole("link", { name: `${episodeId.slice(0, 8)}…${episodeId.slice(-4)}` }).click()
      await page.getByRole("heading", { level: 1, name: "Episode" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/episodes/${episodeId}`)
      await page.getByRole("link", { name: new RegExp(inferenceId.slice(0, 8)) }).waitFor()
      await page.getByRole("region", { name: "Feedback on inference 1" }).getByText("A fine haiku, from the browser").waitFor()
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "episode-with-feedback-desktop")
    } finally {
      await context.close()
    }
  }, 120_000)

  it("renders a json function's output, parsed and raw, at the narrow width", async () => {
    let json: any
    await until(async () => {
      json = (await ui.gateway.post("/v1/inferences/list_inferences", { function_name: "extract_greeting" })).body.inferences[0]
      return json !== undefined
    })
    const { page, context, problems } = await watchedPage(browser, widths.narrow)
    try {
      await page.goto(`${ui.ui}/inferences/${json.inference_id}`)
      await page.getByRole("heading", { name: "Output (JSON)" }).waitFor()
      await page.getByLabel("parsed output").waitFor()
      await page.getByText("Raw output").click()
      // the demonstration is prefilled with the parsed output, as JSON
      expect(JSON.parse(await page.getByRole("textbox", { name: "Demonstration" }).inputValue())).toEqual(json.output.parsed)
      expect(problems).toEqual([])
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "inference-json-narrow")
    } finally {
      await context.close()
    }
  }, 60_000)

  it("filters by a metric's value and by time, from the URL as from the form", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      // seeded: haiku_rating true on inferences 0, 4 and 8, false on 2, 6 and 10 (and an earlier test may have rated one more)
      const seededTrue = ui.seeded.filter((_, i) => i % 4 === 0).map((inference) => inference.inferenceId)
      let rated: Array<string> = []
      await until(async () => {
        const listed = await ui.gateway.post("/v1/inferences/list_inferences", { filters: { type: "boolean_metric", metric_name: "haiku_rating", value: true } })
        rated = listed.body.inferences.map((inference: any) => inference.inference_id)
        return seededTrue.every((id) => rated.includes(id))
      })
      expect(ui.seeded.filter((_, i) => i % 4 === 2).some((inference) => rated.includes(inference.inferenceId))).toBe(false)
      await page.goto(`${ui.ui}/inferences?metric=haiku_rating&metric_value=true`)
      await until(async () => (await inferenceRows(page).count()) === rated.length)
      const links = await inferenceRows(page).getByRole("link").evaluateAll((elements) => elements.map((element) => element.getAttribute("href")))
      for (const id of rated) expect(links.some((href) => href?.endsWith(`/inferences/${id}`))).toBe(true)
      expect(await page.getByLabel("Metric value").inputValue()).toBe("true")
      // nothing after a time to come
      await page.getByLabel("After").fill("2999-01-01T00:00")
      await page.getByRole("button", { name: "Apply filters" }).click()
      await page.getByText("No inference matches these filters.").waitFor()
      expect(new URL(page.url()).searchParams.get("after")).toBe("2999-01-01T00:00")
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("says what is wrong with a tag filter without =, and shows an unknown inference's 404", async () => {
    const { page, context, problems, forget } = await watchedPage(browser)
    try {
      await page.goto(`${ui.ui}/inferences?tag=nobody`)
      await page.getByRole("alert").filter({ hasText: "key=value" }).waitFor()
      await page.goto(`${ui.ui}/inferences/01900000-0000-7000-8000-000000000000`)
      await page.getByRole("alert").filter({ hasText: "404" }).waitFor()
      // the refused read is the point here
      expect(problems.every((problem) => problem.includes("404"))).toBe(true)
      forget()
    } finally {
      await context.close()
    }
  }, 60_000)
})
