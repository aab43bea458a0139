/**
 * Access to the UI in a real browser (Chromium), authentication on: the sign-in page refuses a
 * key without the admin role (403) and a wrong key (401) with the gateway's message; an admin key
 * signs in, its key kept where scripts cannot read it (HttpOnly); on the API keys page a key is
 * created, shown once and copied, then disabled (and the public API refuses it); signing out
 * returns to the sign-in page; a global admin picks the workspace the pages act on, a workspace
 * admin sees its own. No console errors but the refused sign-ins, no axe-core violation,
 * screenshots.
 */
import type { Browser, Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { accessibilityViolations, screenshot, watchedPage } from "../support/browser.ts"
import { type UiGateway, uiSuite, until } from "../support/uiGateway.ts"

const keyPattern = /^sk-gw-([a-z0-9]{12})-[A-Za-z0-9]{48}$/

/** the `datetime-local` value of `time` in the browser's (this machine's) time zone */
const localInput = (time: Date) => {
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${time.getFullYear()}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}T${pad(time.getHours())}:${pad(time.getMinutes())}`
}

const signIn = async (page: Page, key: string) => {
  await page.getByLabel("API key").fill(key)
  await page.getByRole("button", { name: "Sign in" }).click()
}

describe("access to the UI with authentication on", () => {
  let gateway: UiGateway
  let browser: Browser

  uiSuite({ auth: true, inferences: 1 }, (started) => ({ gateway, browser } = started))

  const inference = (key: string) =>
    fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model_name: "dummy::hello", input: { messages: [{ role: "user", content: "Hi" }] } })
    }).then((response) => response.status)

  it("refuses keys that may not sign in, signs an admin in, creates, copies and disables a key, signs out", async () => {
    const { page, context, problems, forget } = await watchedPage(browser)
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gateway.url })
    try {
      await page.goto(gateway.ui)
      await page.getByRole("heading", { level: 1, name: "Sign in to the gateway" }).waitFor()
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "sign-in-desktop")
      expect(problems).toEqual([])

      // a valid key without the admin role: 403, with the way to make one
      const plainKey = await gateway.keyCommand(["--create-api-key"])
      const plainId = keyPattern.exec(plainKey)![1]
      await signIn(page, plainKey)
      const refusal = page.getByRole("alert")
      await refusal.filter({ hasText: "403" }).waitFor()
      expect(await refusal.textContent()).toBe(
        `403: API key ${plainId} does not have the admin role, which the UI requires: create one with \`gateway --create-api-key --admin\``
      )
      expect(problems.some((problem) => problem.startsWith("403 POST"))).toBe(true)
      forget()

      // a key that does not exist: 401
      await signIn(page, `sk-gw-${plainId}-${"A".repeat(48)}`)
      await refusal.filter({ hasText: "401" }).waitFor()
      expect(await refusal.textContent()).toBe("401: unknown API key")
      await screenshot(page, "sign-in-refused-desktop")
      forget()

      // the admin key signs in; scripts see the CSRF token, never the key
      await signIn(page, gateway.adminKey!)
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      const cookies = await page.evaluate("document.cookie") as string
      expect(cookies).not.toContain("gateway_ui_session")
      expect(cookies).not.toContain(gateway.adminKey!)
      expect(cookies).toContain("gateway_ui_csrf=")
      const adminId = keyPattern.exec(gateway.adminKey!)![1]
      expect(await page.locator(".session").textContent()).toContain(`key ${adminId}`)

      // the API keys page lists the keys, this session's marked
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "API keys" }).click()
      await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
      const rowOf = (publicId: string) => page.getByRole("row").filter({ hasText: publicId })
      await rowOf(adminId).waitFor()
      expect(await rowOf(adminId).textContent()).toContain("(this session)")
      expect(await rowOf(adminId).textContent()).toContain("admin")
      expect(await rowOf(plainId).textContent()).toContain("active")
      expect(await accessibilityViolations(page)).toEqual([])

      // create a key that expires tomorrow: shown once, copied
      const tomorrow = new Date(Date.now() + 86_400_000)
      tomorrow.setSeconds(0, 0)
      await page.getByLabel("Expires at (your local time)").fill(localInput(tomorrow))
      await page.getByRole("button", { name: "Create key" }).click()
      const field = page.getByLabel("New API key")
      await field.waitFor()
      const newKey = await field.inputValue()
      expect(newKey).toMatch(keyPattern)
      expect(await field.getAttribute("readonly")).not.toBeNull()
      const newId = keyPattern.exec(newKey)![1]
      await page.getByRole("button", { name: "Copy", exact: true }).click()
      await page.getByRole("status").filter({ hasText: "Copied" }).waitFor()
      expect(await page.evaluate("navigator.clipboard.readText()")).toBe(newKey)
      await rowOf(newId).waitFor()
      expect(await rowOf(newId).textContent()).toContain("active")
      expect(await rowOf(newId).getByRole("cell").nth(1).textContent()).toBe("API")
      const listed = await fetch(`${gateway.url}/v1/ui/api_keys`, { headers: gateway.headers }).then((response) => response.json()) as any
      expect(listed.api_keys.find((key: any) => key.public_id === newId)).toMatchObject({ expires_at: tomorrow.toISOString(), admin: false })
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "api-keys-created-desktop")
      // the new key calls the public API
      expect(await inference(newKey)).toBe(200)

      // done: the key is gone from the page for good
      await page.getByRole("button", { name: "Done" }).click()
      await page.getByLabel("New API key").waitFor({ state: "detached" })
      expect(await page.content()).not.toContain(newKey)

      // disable it, after an inline confirmation (which can be cancelled)
      await page.getByRole("button", { name: `Disable key ${newId}` }).click()
      await page.getByRole("button", { name: "Cancel" }).click()
      expect(await rowOf(newId).textContent()).toContain("active")
      await page.getByRole("button", { name: `Disable key ${newId}` }).click()
      const confirmation = page.getByRole("group", { name: `Confirm disabling key ${newId}` })
      expect(await confirmation.textContent()).toContain("Disable for good?")
      await confirmation.getByRole("button", { name: `Yes, disable ${newId}` }).click()
      await rowOf(newId).filter({ hasText: "disabled" }).waitFor()
      expect(await rowOf(newId).getByRole("button").count()).toBe(0)
      // the public API refuses it once the key cache lets it go (1 s)
      await until(async () => (await inference(newKey)) === 401, 5_000)
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "api-keys-disabled-desktop")

      // sign out: the sign-in page again, and the session no longer works
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByRole("heading", { level: 1, name: "Sign in to the gateway" }).waitFor()
      expect(await page.evaluate("document.cookie")).toBe("")
      await page.goto(`${gateway.ui}/api-keys`)
      await page.getByRole("heading", { level: 1, name: "Sign in to the gateway" }).waitFor()
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)

  it("lets a global admin pick the workspace the UI acts on, and shows a workspace admin its own", async () => {
    const memberB = keyPattern.exec(await gateway.keyCommand(["--create-api-key", "--workspace", "team-b"]))![1]
    const adminB = await gateway.keyCommand(["--create-api-key", "--admin", "--workspace", "team-b"])
    const globalKey = await gateway.keyCommand(["--create-api-key", "--admin", "--global"])
    const adminId = keyPattern.exec(gateway.adminKey!)![1]
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.ui}/api-keys`)
      await signIn(page, globalKey)
      await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
      const rowOf = (publicId: string) => page.getByRole("row").filter({ hasText: publicId })
      // in default at first: the keys of default, not team-b's
      await rowOf(adminId).waitFor()
      expect(await rowOf(memberB).count()).toBe(0)
      const picker = page.getByLabel("Workspace")
      expect(await picker.inputValue()).toBe("default")
      await picker.fill("team-b")
      await page.getByRole("button", { name: "Switch" }).click()
      await rowOf(memberB).waitFor()
      expect(await rowOf(adminId).count()).toBe(0)
      expect(await page.getByLabel("Workspace").inputValue()).toBe("team-b")
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(page, "workspace-picked-desktop")
      // a key made there is team-b's
      await page.getByRole("button", { name: "Create key" }).click()
      const newId = keyPattern.exec(await page.getByLabel("New API key").inputValue())![1]
      const listed = await fetch(`${gateway.url}/v1/ui/api_keys`, { headers: { authorization: `Bearer ${adminB}` } }).then((response) => response.json()) as any
      expect(listed.api_keys.map((key: any) => key.public_id)).toContain(newId)
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByRole("heading", { level: 1, name: "Sign in to the gateway" }).waitFor()

      // team-b's admin: its workspace shown, no picker
      await signIn(page, adminB)
      await page.getByRole("heading", { level: 1 }).first().waitFor()
      await page.getByTestId("workspace").waitFor()
      expect(await page.getByTestId("workspace").textContent()).toBe("workspace team-b")
      expect(await page.getByLabel("Workspace").count()).toBe(0)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)
})
