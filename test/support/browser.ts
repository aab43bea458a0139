/**
 * The UI's tests in a real browser: Debian's Chromium driven by playwright-core, each page
 * watched for console errors and failed requests, audited with axe-core, and photographed at a
 * desktop and a narrow width into test-artifacts/ui/ (kept after the run, for people to look at).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { createRequire } from "node:module"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { chromiumBin } from "../../scripts/chromium.ts"
import { repoRoot } from "./gateway.ts"

export const screenshotFolder = path.join(repoRoot, "test-artifacts/ui")

export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: chromiumBin, args: ["--no-sandbox", "--disable-dev-shm-usage"] })

export const widths = { desktop: { width: 1366, height: 900 }, narrow: { width: 390, height: 844 } } as const

export interface WatchedPage {
  readonly page: Page
  readonly context: BrowserContext
  /** console errors, uncaught exceptions and failed requests (4xx/5xx) the page met so far */
  readonly problems: Array<string>
  /** forgets the problems so far (after a step that is meant to fail, such as a refused sign-in) */
  readonly forget: () => void
}

/** A new page (in its own context: its own cookies) that records what goes wrong on it. */
export const watchedPage = async (browser: Browser, viewport: { width: number; height: number } = widths.desktop): Promise<WatchedPage> => {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`exception: ${error.message}`))
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })
  return { page, context, problems, forget: () => void problems.splice(0) }
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** axe-core's WCAG 2 A/AA violations on the page as it is now: "rule: target" lines (none when accessible). */
export const accessibilityViolations = async (page: Page): Promise<Array<string>> => {
  // evaluated through the debugging protocol, which the page's Content-Security-Policy does not govern (a script tag would be refused)
  await page.evaluate(axeSource)
  // run in the page (a string: this file is not compiled with the DOM's types)
  const violations = await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations.map((violation) =>
      violation.id + " (" + violation.impact + "): " + violation.help + " at " +
      violation.nodes.slice(0, 3).map((node) => node.target.join(" ")).join(", "))
  })()`) as Array<string>
  return violations
}

/** Saves the page at its current size as test-artifacts/ui/<name>.png. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  fs.mkdirSync(screenshotFolder, { recursive: true })
  const file = path.join(screenshotFolder, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}
