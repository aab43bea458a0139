/**
 * The Playground in a real browser: a function's two variants run side by side on an input typed
 * into the form generated from its user schema (dummy::streamed_echo answers the rendered messages, so its
 * answer holds the topic; dummy::hello a fixed text), then two models by their short-hands on a
 * text message. Dry runs (the default) store nothing; unchecked, the run is stored and links to
 * its inference. No console errors, no axe violations, screenshots.
 */
import type { Browser, Locator, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite, until } from "../support/uiGateway.ts"

const dummyText = "Hello from the dummy provider. This answer is always the same."

describe("the Playground", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ inferences: 2 }, (started) => ({ gateway, browser } = started))

  const answer = (page: Page, name: string): Locator => page.getByRole("region", { name, exact: true })

  /** waits until the answer card `name` says done, and returns its output text */
  const finished = async (page: Page, name: string): Promise<string> => {
    const card = answer(page, name)
    await card.getByText("done", { exact: true }).waitFor({ timeout: 15_000 })
    return (await card.locator("pre.output").allInnerTexts()).join("")
  }

  const storedIds = async (ids: ReadonlyArray<string>) => {
    const got = await gateway.gateway.post("/v1/inferences/get_inferences", { ids }, gateway.headers)
    expect(got.status, JSON.stringify(got.body)).toBe(200)
    return got.body.inferences.map((inference: { inference_id: string }) => inference.inference_id)
  }

  for (const [width, viewport] of Object.entries(widths)) {
    it(`runs two variants of haiku side by side on the generated form, then two models (${width})`, async () => {
      const { page, context, problems } = await watchedPage(browser, viewport)
      try {
        await page.goto(`${gateway.ui}/playground`)
        await page.getByRole("heading", { level: 1, name: "Playground" }).waitFor()
        await page.getByLabel("Function").selectOption("haiku")
        await page.getByLabel(/^echo \(/).check()
        await page.getByLabel(/^fixed \(/).check()
        // the form of haiku's user schema: one required string
        await page.getByLabel("topic (required)").fill("lighthouses at dusk")
        expect(await page.getByLabel("Dry run: call the providers but store nothing").isChecked()).toBe(true)
        await page.getByRole("button", { name: /^Run 2 side by side/ }).click()
        const echoed = await finished(page, "Variant echo")
        const fixed = await finished(page, "Variant fixed")
        expect(echoed).toContain("Write a haiku about lighthouses at dusk.")
        expect(fixed).toBe(dummyText)
        // side by side: the two cards share a row at the desktop width
        const [echoBox, fixedBox] = await Promise.all([answer(page, "Variant echo").boundingBox(), answer(page, "Variant fixed").boundingBox()])
        if (width === "desktop") expect(Math.abs(echoBox!.y - fixedBox!.y)).toBeLessThan(2)
        expect(problems, problems.join("\n")).toEqual([])
        expect(await accessibilityViolations(page)).toEqual([])
        await screenshot(page, `playground-variants-${width}`)

        // a dry run stored nothing
        const dryIds = await answer(page, "Variant echo").getByText(/\(not stored\)/).innerText()
        expect(await storedIds([dryIds.replace(" (not stored)", "")])).toEqual([])

        await page.getByLabel("Compare").selectOption("models")
        await page.getByLabel("Message").fill("Tell me about otters")
        for (const model of ["dummy::streamed_echo", "dummy::hello"]) {
          await page.getByLabel("Another model").fill(model)
          await page.getByRole("button", { name: "Add", exact: true }).click()
        }
        await page.getByRole("button", { name: /^Run 2 side by side/ }).click()
        expect(await finished(page, "Model dummy::streamed_echo")).toContain("Tell me about otters")
        expect(await finished(page, "Model dummy::hello")).toBe(dummyText)
        expect(problems, problems.join("\n")).toEqual([])
        expect(await accessibilityViolations(page)).toEqual([])
        await screenshot(page, `playground-models-${width}`)
      } finally {
        await context.close()
      }
    }, 120_000)
  }

  it("stores a run when the dry run is unchecked, and links to its inference", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/playground`)
      await page.getByLabel("Function").selectOption("haiku")
      await page.getByLabel(/^fixed \(/).check()
      await page.getByLabel("topic (required)").fill("snow")
      await page.getByLabel("Dry run: call the providers but store nothing").uncheck()
      await page.getByRole("button", { name: /^Run 1 side by side/ }).click()
      await finished(page, "Variant fixed")
      const link = answer(page, "Variant fixed").getByRole("link")
      const inferenceId = await link.innerText()
      await until(async () => (await storedIds([inferenceId])).length === 1)
      const stored = await gateway.gateway.post("/v1/inferences/get_inferences", { ids: [inferenceId] }, gateway.headers)
      expect(stored.body.inferences[0]).toMatchObject({ variant_name: "fixed", tags: { source: "playground" } })
      await link.click()
      await page.getByRole("heading", { level: 1 }).filter({ hasText: "Inference" }).first().waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/inferences/${inferenceId}`)
      expect(problems, problems.join("\n")).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("names the missing argument instead of running", async () => {
    const { page, context } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/playground`)
      await page.getByLabel("Function").selectOption("haiku")
      await page.getByLabel(/^echo \(/).check()
      await page.getByRole("button", { name: /^Run/ }).click()
      await expect(page.getByRole("alert").innerText()).resolves.toBe("User: topic is required")
      expect(await page.getByRole("region", { name: "Answers" }).count()).toBe(0)
    } finally {
      await context.close()
    }
  })
})

describe("the Playground with authentication on", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ auth: true, inferences: 1 }, (started) => ({ gateway, browser } = started))

  it("streams through the UI's session (its cookie and CSRF token)", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/playground`)
      await page.getByLabel("API key").fill(gateway.adminKey!)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { level: 1, name: "Playground" }).waitFor()
      await page.getByLabel("Compare").selectOption("models")
      await page.getByLabel("Message").fill("Hello through the session")
      await page.getByLabel("Another model").fill("dummy::streamed_echo")
      await page.getByRole("button", { name: "Add", exact: true }).click()
      await page.getByRole("button", { name: /^Run 1 side by side/ }).click()
      const card = page.getByRole("region", { name: "Model dummy::streamed_echo", exact: true })
      await card.getByText("done", { exact: true }).waitFor({ timeout: 15_000 })
      expect(await card.locator("pre.output").innerText()).toContain("Hello through the session")
      expect(problems, problems.join("\n")).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)
})
