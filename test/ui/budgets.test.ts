/**
 * The budgets page in a real browser (Chromium), authentication on, on the embedded database: an
 * admin opens it from the navigation, sets a budget of a tag per month (a refused amount shows
 * the gateway's 400), changes its limit by setting it again, then deletes it after confirming;
 * each step is what `GET /v1/budgets` answers. No console errors but the refused amount, no
 * axe-core violation, a screenshot.
 */
import type { Browser } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage } from "../support/browser.ts"
import { type UiGateway, uiSuite } from "../support/uiGateway.ts"

describe("the budgets page", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ auth: true }, (started) => ({ gateway, browser } = started))

  const budgets = async () => {
    const response = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${gateway.adminKey}` } })
    expect(response.status).toBe(200)
    return ((await response.json()) as { budgets: Array<any> }).budgets
  }

  it("sets, changes and deletes a budget, as the gateway has it", async () => {
    const { page, context, problems, forget } = await watchedPage(browser)
    try {
      await page.goto(gateway.ui)
      await page.getByLabel("API key").fill(gateway.adminKey!)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Budgets" }).click()
      await page.getByRole("heading", { level: 1, name: "Budgets" }).waitFor()
      await page.getByText("No budgets in this workspace.").waitFor()

      const form = page.getByRole("form", { name: "Set a budget" })
      await form.getByLabel("Scope").selectOption("tag")
      await form.getByLabel("Tag key").fill("team")
      await form.getByLabel("Tag value").fill("search")
      await form.getByLabel("Period").selectOption("month")
      // a negative amount: the gateway's 400 names the field
      await form.getByLabel("Limit").fill("-1")
      await form.getByRole("button", { name: "Set budget" }).click()
      await page.getByRole("alert").filter({ hasText: "limit" }).waitFor()
      expect(problems.some((problem) => problem.startsWith("400 PUT"))).toBe(true)
      forget()

      await form.getByLabel("Limit").fill("12.5")
      await form.getByRole("button", { name: "Set budget" }).click()
      const row = page.getByRole("row").filter({ hasText: "tag team=search" })
      await row.filter({ hasText: "12.5" }).waitFor()
      expect(await row.textContent()).toContain("month")
      const [set] = await budgets()
      expect(set).toMatchObject({ source: "runtime", period: "month", limit: 12.5, scope: [{ kind: "workspace", value: "default" }, { kind: "tag", key: "team", value: "search" }] })
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "budgets-desktop")

      // the same scope and period again: its limit changes, the row stays one
      await form.getByLabel("Limit").fill("20")
      await form.getByRole("button", { name: "Set budget" }).click()
      // not "20" alone: the row's date holds it too, before the change shows
      await row.filter({ hasNotText: "12.5" }).filter({ hasText: "20" }).waitFor()
      expect(await row.count()).toBe(1)
      expect((await budgets()).map((budget) => [budget.id, budget.limit])).toEqual([[set.id, 20]])

      await row.getByRole("button", { name: "Delete the budget of workspace default, tag team=search per month" }).click()
      await page.getByRole("group", { name: "Confirm deleting the budget of workspace default, tag team=search per month" })
        .getByRole("button", { name: "Yes, delete" }).click()
      await page.getByText("No budgets in this workspace.").waitFor()
      expect(await budgets()).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)
})
