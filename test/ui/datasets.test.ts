/**
 * The dataset pages in a real browser (Chromium), on a gateway with seeded data (a dataset
 * "seeded" of 4 haiku datapoints, haiku inferences tagged user=alice|bob): a dataset built from
 * an inference query, a datapoint edited into a new version with the old one stale in its
 * history, an export imported into another dataset, filters and search, deletions confirmed
 * in place. Each page without console errors or failed requests, without axe violations, and
 * photographed into test-artifacts/ui/; the forms reached and submitted with the keyboard.
 */
import * as fs from "node:fs"
import type { Browser, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage, type WatchedPage, widths } from "../support/browser.ts"
import { type UiGateway, uiSuite } from "../support/uiGateway.ts"

/** the id of the element that has the focus */
const focusedId = (page: Page) => page.evaluate("document.activeElement && document.activeElement.id") as Promise<string | null>
const focusedText = (page: Page) => page.evaluate("document.activeElement && document.activeElement.textContent") as Promise<string | null>

/** presses Tab until `id` has the focus: it is reachable by keyboard (at most `limit` presses) */
const tabTo = async (page: Page, id: string, limit = 80) => {
  for (let i = 0; i < limit; i++) {
    if ((await focusedId(page)) === id) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`#${id} not reached with ${limit} presses of Tab`)
}

/** no problem met so far, no axe violation now, and a photograph */
const checkPage = async (watched: WatchedPage, name: string) => {
  await watched.page.waitForLoadState("networkidle")
  expect(watched.problems, watched.problems.join("\n")).toEqual([])
  expect(await accessibilityViolations(watched.page), name).toEqual([])
  await screenshot(watched.page, name)
}

describe("the dataset pages", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({}, (started) => ({ gateway, browser } = started))

  const liveIds = async (dataset: string): Promise<Array<string>> => {
    const answer = await gateway.gateway.post(`/v1/datasets/${dataset}/list_datapoints`, { limit: 100 }, gateway.headers)
    expect(answer.status).toBe(200)
    return answer.body.datapoints.map((datapoint: { id: string }) => datapoint.id)
  }

  const datasetRow = (page: Page, name: string) => page.locator("tr", { has: page.getByRole("link", { name, exact: true }) })

  it("builds a dataset from an inference query (tag user=alice) with the keyboard, and lists it with its count", async () => {
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      await page.goto(`${gateway.ui}/datasets`)
      await page.getByRole("heading", { level: 1, name: "Datasets" }).waitFor()
      await datasetRow(page, "seeded").waitFor()
      expect(await datasetRow(page, "seeded").getByRole("cell").nth(1).textContent()).toBe("4")

      const form = page.getByRole("form", { name: "Create from inferences" })
      const nameField = form.getByLabel("Dataset name")
      // reached from the top of the page with Tab alone, then filled and submitted from the keyboard
      await tabTo(page, (await nameField.getAttribute("id"))!)
      await page.keyboard.type("alice_haikus")
      await page.keyboard.press("Tab")
      expect(await focusedId(page)).toBe(await form.getByLabel("Function").getAttribute("id"))
      await form.getByLabel("Function").selectOption("haiku")
      await form.getByLabel("Tag filter (key=value)").focus()
      await page.keyboard.type("user=alice")
      await form.getByLabel("Output", { exact: true }).selectOption("inference")
      await form.getByLabel("Limit").fill("100")
      await form.getByLabel("Limit").focus()
      await page.keyboard.press("Tab")
      expect(await focusedText(page)).toBe("Create datapoints")
      await page.keyboard.press("Enter")

      await form.getByRole("status").filter({ hasText: "Added 6 datapoints to alice_haikus" }).waitFor()
      await datasetRow(page, "alice_haikus").waitFor()
      expect(await datasetRow(page, "alice_haikus").getByRole("cell").nth(1).textContent()).toBe("6")
      expect(await datasetRow(page, "alice_haikus").getByRole("cell").nth(2).textContent()).toBe("haiku (6)")
      expect((await liveIds("alice_haikus")).length).toBe(6)
      await checkPage(watched, "datasets-created-desktop")

      // the gateway's refusal is shown as it says it: a name that is not a dataset name
      await nameField.fill("bad name/with slash")
      await page.keyboard.press("Enter")
      await form.getByRole("alert").waitFor()
      expect(await form.getByRole("alert").textContent()).toMatch(/^400: .*dataset_name/)
    } finally {
      await watched.context.close()
    }
  }, 120_000)

  it("filters a dataset's datapoints by tag and function, and searches their text", async () => {
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      await page.goto(`${gateway.ui}/datasets/seeded`)
      await page.getByRole("heading", { level: 1, name: "seeded" }).waitFor()
      const table = page.getByRole("table", { name: "Datapoints of seeded" })
      const rows = table.locator("tbody tr")
      await expect.poll(() => rows.count()).toBe(4)
      await checkPage(watched, "dataset-desktop")

      const filters = page.getByRole("form", { name: "Filter datapoints" })
      await filters.getByLabel("Tag (key=value)").fill("user=bob")
      await filters.getByLabel("Tag (key=value)").press("Enter")
      await expect.poll(() => table.getByText("user=bob").count()).toBe(2)
      await expect.poll(() => rows.count()).toBe(2)
      expect(await table.getByText("user=alice").count()).toBe(0)

      await filters.getByRole("button", { name: "Clear" }).click()
      await expect.poll(() => rows.count()).toBe(4)
      await filters.getByLabel("Function").selectOption("haiku")
      await filters.getByRole("button", { name: "Apply filters" }).click()
      await expect.poll(() => rows.count()).toBe(4)

      // the gateway's own search: as many rows as list_datapoints finds for the word
      const found = await gateway.gateway.post("/v1/datasets/seeded/list_datapoints", { search_query: "moon" }, gateway.headers)
      expect(found.body.datapoints.length).toBeGreaterThan(0)
      expect(found.body.datapoints.length).toBeLessThan(4)
      await filters.getByLabel("Search").fill("moon")
      await filters.getByLabel("Search").press("Enter")
      await expect.poll(() => rows.count()).toBe(found.body.datapoints.length)

      // a tag filter that is not key=value is refused before anything is sent
      await filters.getByLabel("Tag (key=value)").fill("user")
      await filters.getByLabel("Tag (key=value)").press("Enter")
      expect(await filters.getByRole("alert").textContent()).toContain('Tag: "user" is not key=value')
      expect(watched.problems).toEqual([])
    } finally {
      await watched.context.close()
    }
  }, 120_000)

  it("edits a datapoint: invalid JSON is refused, a save makes a new version, and the old one is listed as stale", async () => {
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      await page.goto(`${gateway.ui}/datasets/seeded`)
      const first = page.getByRole("table", { name: "Datapoints of seeded" }).getByRole("link").first()
      const oldId = (await first.getAttribute("title"))!
      await first.click()
      await page.getByRole("heading", { level: 1, name: "Datapoint" }).waitFor()
      const editor = page.getByRole("form", { name: "Edit datapoint" })
      await editor.waitFor()
      await checkPage(watched, "datapoint-desktop")

      await editor.getByLabel("Name").fill("edited haiku")
      await editor.getByLabel("Tags").fill("user=carol\nreviewed=yes")
      await editor.getByLabel("Output (JSON)").fill('[{"type": "text", "text": "An edited haiku"')
      await editor.getByRole("button", { name: "Save as a new version" }).click()
      expect(await editor.getByRole("alert").textContent()).toMatch(/^Output is not valid JSON: /)
      expect(new URL(page.url()).pathname).toBe(`/ui/datasets/seeded/datapoints/${oldId}`)

      await editor.getByLabel("Output (JSON)").fill('[{"type": "text", "text": "An edited haiku"}]')
      // submitted from the keyboard: the save button is the next stop after the output
      await editor.getByLabel("Output (JSON)").focus()
      await page.keyboard.press("Tab")
      expect(await focusedText(page)).toBe("Save as a new version")
      await page.keyboard.press("Enter")
      await page.waitForURL((url) => !url.pathname.endsWith(oldId))
      const newId = new URL(page.url()).pathname.split("/").at(-1)!
      expect(newId).not.toBe(oldId)
      await page.getByRole("status").filter({ hasText: "Saved as a new version" }).waitFor()

      const history = page.getByRole("table", { name: "Versions of this datapoint, newest first" })
      await expect.poll(() => history.locator("tbody tr").count()).toBe(2)
      const [newest, older] = [history.locator("tbody tr").nth(0), history.locator("tbody tr").nth(1)]
      expect(await newest.textContent()).toContain("(shown)")
      expect(await newest.getByText("live").count()).toBe(1)
      expect(await newest.getByText("edited haiku").count()).toBe(1)
      expect(await older.getByText("stale").count()).toBe(1)
      expect(await older.getByRole("link").getAttribute("title")).toBe(oldId)
      expect(await older.getByRole("cell").nth(4).textContent()).not.toBe("—")
      await checkPage(watched, "datapoint-saved-desktop")

      // as stored: the new version with the edits, the old one stale
      const stored = await gateway.gateway.post("/v1/datasets/seeded/get_datapoints", { ids: [newId, oldId] }, gateway.headers)
      const [current, old] = stored.body.datapoints
      expect(current).toMatchObject({ name: "edited haiku", tags: { user: "carol", reviewed: "yes" }, output: [{ type: "text", text: "An edited haiku" }], staled_at: null })
      expect(old.input).toEqual(current.input)
      expect(old.staled_at).toEqual(expect.any(String))

      // the stale version opens read-only, pointing at the live one
      await older.getByRole("link").click()
      await page.getByRole("note").filter({ hasText: "This version is stale" }).waitFor()
      expect(await page.getByRole("form", { name: "Edit datapoint" }).count()).toBe(0)
      await page.getByRole("link", { name: "Open the live version" }).click()
      await page.getByRole("form", { name: "Edit datapoint" }).waitFor()
      expect(new URL(page.url()).pathname.endsWith(newId)).toBe(true)
      await checkPage(watched, "datapoint-live-desktop")
    } finally {
      await watched.context.close()
    }
  }, 120_000)

  it("exports a dataset as JSON Lines and imports the file into another dataset", async () => {
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      const live = await liveIds("seeded")
      await page.goto(`${gateway.ui}/datasets/seeded`)
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSONL" }).click()])
      expect(download.suggestedFilename()).toBe("seeded.jsonl")
      const file = (await download.path())!
      const lines = fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "")
      expect(lines.map((line) => JSON.parse(line).id).sort()).toEqual([...live].sort())

      await page.goto(`${gateway.ui}/datasets`)
      const form = page.getByRole("form", { name: "Import JSONL" })
      await form.getByLabel("Dataset to import into").fill("seeded_copy")
      await form.getByLabel("JSONL file").setInputFiles(file)
      // from the file input, Tab reaches the submit button, which Enter presses
      await form.getByLabel("JSONL file").focus()
      await page.keyboard.press("Tab")
      expect(await focusedText(page)).toBe("Import")
      await page.keyboard.press("Enter")
      await form.getByRole("status").filter({ hasText: `Imported ${live.length} datapoints into seeded_copy` }).waitFor()
      await datasetRow(page, "seeded_copy").waitFor()
      expect(await datasetRow(page, "seeded_copy").getByRole("cell").nth(1).textContent()).toBe(String(live.length))
      expect((await liveIds("seeded_copy")).length).toBe(live.length)
      await checkPage(watched, "datasets-imported-desktop")

      // a file that is not JSON Lines: the gateway's message, nothing imported
      fs.writeFileSync(`${file}.bad`, "not json\n")
      await form.getByLabel("JSONL file").setInputFiles(`${file}.bad`)
      await form.getByRole("button", { name: "Import" }).click()
      await form.getByRole("alert").waitFor()
      expect(await form.getByRole("alert").textContent()).toMatch(/^400: /)
      expect((await liveIds("seeded_copy")).length).toBe(live.length)
    } finally {
      await watched.context.close()
    }
  }, 120_000)

  it("deletes a datapoint and then the dataset, each after an inline confirmation", async () => {
    const created = await gateway.gateway.post("/v1/datasets/doomed/from_inferences", { type: "inference_query", function_name: "haiku", limit: 3 }, gateway.headers)
    expect(created.status).toBe(200)
    const [victim] = created.body.ids as Array<string>
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      await page.goto(`${gateway.ui}/datasets/doomed`)
      const table = page.getByRole("table", { name: "Datapoints of doomed" })
      await expect.poll(() => table.locator("tbody tr").count()).toBe(3)

      await table.getByRole("button", { name: `Delete datapoint ${victim}` }).click()
      // the confirmation takes the focus; Cancel gives it back and deletes nothing
      expect(await focusedText(page)).toBe("Yes, delete")
      await checkPage(watched, "dataset-confirm-desktop")
      await page.keyboard.press("Tab")
      await page.keyboard.press("Enter")
      expect(await page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe(`Delete datapoint ${victim}`)
      expect((await liveIds("doomed")).length).toBe(3)

      await page.keyboard.press("Enter")
      await page.keyboard.press("Enter")
      await page.getByRole("status").filter({ hasText: "Deleted datapoint" }).waitFor()
      await expect.poll(() => table.locator("tbody tr").count()).toBe(2)
      expect(await liveIds("doomed")).not.toContain(victim)

      await page.getByRole("button", { name: "Delete dataset" }).click()
      await page.getByRole("group", { name: "Are you sure? All 2 live datapoints become stale." }).waitFor()
      await page.getByRole("button", { name: "Yes, delete the dataset" }).click()
      await page.getByRole("heading", { level: 1, name: "Datasets" }).waitFor()
      await page.getByRole("status").filter({ hasText: "Deleted dataset doomed: 2 datapoints made stale." }).waitFor()
      expect(await liveIds("doomed")).toEqual([])
      // listed while its stale datapoints are kept, with none live
      expect(await datasetRow(page, "doomed").getByRole("cell").nth(1).textContent()).toBe("0")
      await checkPage(watched, "datasets-deleted-desktop")
    } finally {
      await watched.context.close()
    }
  }, 120_000)

  it("shows the three pages at the narrow width without errors, accessible", async () => {
    const watched = await watchedPage(browser, widths.narrow)
    const { page } = watched
    try {
      const [id] = await liveIds("seeded")
      for (const [name, path, heading] of [
        ["datasets-narrow", "/datasets", "Datasets"],
        ["dataset-narrow", "/datasets/seeded", "seeded"],
        ["datapoint-narrow", `/datasets/seeded/datapoints/${id}`, "Datapoint"]
      ] as const) {
        await page.goto(`${gateway.ui}${path}`)
        await page.getByRole("heading", { level: 1, name: heading }).waitFor()
        await page.getByRole("table").first().locator("tbody tr").first().waitFor()
        await checkPage(watched, name)
      }
    } finally {
      await watched.context.close()
    }
  }, 120_000)
})

describe("the dataset pages with authentication on", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ auth: true, inferences: 4 }, (started) => ({ gateway, browser } = started))

  it("exports with the session cookie, and saves and deletes with the CSRF token", async () => {
    const watched = await watchedPage(browser)
    const { page } = watched
    try {
      await page.goto(`${gateway.ui}/datasets/seeded`)
      await page.getByLabel("API key").fill(gateway.adminKey!)
      await page.getByRole("button", { name: "Sign in" }).click()
      const table = page.getByRole("table", { name: "Datapoints of seeded" })
      await expect.poll(() => table.locator("tbody tr").count()).toBe(4)

      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSONL" }).click()])
      expect(fs.readFileSync((await download.path())!, "utf8").trim().split("\n")).toHaveLength(4)

      await table.getByRole("link").first().click()
      const editor = page.getByRole("form", { name: "Edit datapoint" })
      await editor.getByLabel("Name").fill("signed in edit")
      await editor.getByRole("button", { name: "Save as a new version" }).click()
      await page.getByRole("status").filter({ hasText: "Saved as a new version" }).waitFor()

      await page.getByRole("link", { name: "← Dataset seeded" }).click()
      await page.getByRole("button", { name: "Delete dataset" }).click()
      await page.getByRole("button", { name: "Yes, delete the dataset" }).click()
      await page.getByRole("status").filter({ hasText: "Deleted dataset seeded: 4 datapoints made stale." }).waitFor()
      expect(watched.problems, watched.problems.join("\n")).toEqual([])
    } finally {
      await watched.context.close()
    }
  }, 120_000)
})
