/**
 * `/docs` on the gateway's origin, where the UI's session cookie is sent (issue 33): the page
 * runs under a strict Content-Security-Policy allowing exactly its two inline scripts (by hash),
 * requests to its own origin only, and no framing. Checked over HTTP (the headers, each hash
 * matching an inline script of the page) and in a real browser (Debian's Chromium): the
 * reference renders with its operations and its "Test Request" reaches the gateway, a script
 * injected into the page does not run, and another page cannot frame it.
 */
import { createHash } from "node:crypto"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, watchedPage } from "../support/browser.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

/** the violations a page meets, recorded from its first script on */
const recordViolations = `
  window.__violations = []
  document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(event.violatedDirective + " " + event.blockedURI))
`

/**
 * Scalar's bundle (its copy of zod) probes whether `new Function` works, catches the refusal and
 * goes on without it: the one violation the page meets, by design of the policy (no eval).
 */
const evalProbe = "script-src eval"

describe("/docs under a Content-Security-Policy", () => {
  let gateway: RunningGateway
  let browser: Browser

  beforeAll(async () => {
    ;[gateway, browser] = await Promise.all([startGateway({ config: "" }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await gateway?.stop()
  })

  it("answers with a policy allowing exactly the page's inline scripts, its own origin, and no framing", async () => {
    const answer = await fetch(`${gateway.url}/docs`)
    expect(answer.status).toBe(200)
    const page = await answer.text()
    const policy = answer.headers.get("content-security-policy") ?? ""
    const directives = new Map(policy.split(";").map((directive) => {
      const [name, ...sources] = directive.trim().split(/\s+/)
      return [name, sources] as const
    }))
    expect(directives.get("default-src")).toEqual(["'none'"])
    expect(directives.get("frame-ancestors")).toEqual(["'none'"])
    expect(directives.get("connect-src")).toEqual(["'self'"])
    expect(directives.get("base-uri")).toEqual(["'none'"])
    expect(directives.get("form-action")).toEqual(["'none'"])
    // the scripts: one hash per inline script of the page, nothing else (no 'unsafe-inline', no 'unsafe-eval', no host)
    const inline = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, source]) => `'sha256-${createHash("sha256").update(source).digest("base64")}'`)
    expect(inline).toHaveLength(2)
    expect(directives.get("script-src")).toEqual(inline)
    expect(page).not.toMatch(/<script[^>]*\ssrc=/)
    expect(answer.headers.get("x-frame-options")).toBe("DENY")
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
    expect(answer.headers.get("referrer-policy")).toBe("same-origin")
    // the same page and policy on every answer
    const again = await fetch(`${gateway.url}/docs`)
    expect(again.headers.get("content-security-policy")).toBe(policy)
    expect(await again.text()).toBe(page)
  })

  it("renders in a browser with its operations, its Test Request reaches the gateway, no other violation, and an injected script does not run", async () => {
    const { page, context } = await watchedPage(browser)
    // console errors, but those of the two answers expected: Chromium's /favicon.ico (the gateway has none) and the 400 the Test Request gets
    const errors: Array<string> = []
    page.on("console", (message) => {
      const url = message.location().url
      if (message.type() === "error" && !url.endsWith("/favicon.ico") && !url.endsWith("/inference")) errors.push(`${message.text()} (${url})`)
    })
    page.on("pageerror", (error) => errors.push(error.message))
    try {
      await page.addInitScript(recordViolations)
      await page.goto(`${gateway.url}/docs`)
      await page.getByText("Run an inference").first().waitFor({ timeout: 20_000 })
      await page.getByText("Open Group\nStatus").first().click()
      await page.getByText("Whether the gateway and its database answer").first().waitFor()
      // the API client built into the page: a request to the gateway (the first operation with a
      // Test Request button: which one that is depends on what the page has opened), its answer shown
      await page.getByRole("button", { name: /Test Request/ }).first().click()
      const sent = page.waitForResponse((response) => response.url().startsWith(gateway.url) && !new URL(response.url()).pathname.startsWith("/docs"))
      await page.getByRole("button", { name: /Send/ }).first().click()
      const answered = await sent
      // GET /status answers 200; POST /inference without a body, 400
      const shown = ({ 200: "200 OK", 400: "400 Bad Request" } as Record<number, string>)[answered.status()]
      expect(shown, `${answered.url()} answered ${answered.status()}`).toBeDefined()
      await page.getByText(shown).first().waitFor()
      expect(await page.evaluate("window.__violations")).toEqual([expect.stringMatching(new RegExp(`^${evalProbe}`))])
      expect(errors).toEqual([])

      // markup an XSS would leave behind: an inline script element, and an inline handler
      await page.evaluate(`
        const script = document.createElement("script")
        script.textContent = "window.__injected = true"
        document.body.append(script)
        const image = document.createElement("img")
        image.setAttribute("src", "data:,")
        image.setAttribute("onerror", "window.__injected = true")
        document.body.append(image)
      `)
      await page.waitForTimeout(200)
      expect(await page.evaluate("window.__injected")).toBeUndefined()
      expect(await page.evaluate("window.__violations")).toEqual(
        expect.arrayContaining([expect.stringMatching(/^script-src-elem inline/), expect.stringMatching(/^script-src-attr inline/)])
      )
    } finally {
      await context.close()
    }
  })

  it("cannot be framed by another page", async () => {
    const { page, context } = await watchedPage(browser)
    try {
      // the main page's load waits for its frame's
      await page.setContent(`<iframe src="${gateway.url}/docs" width="800" height="600"></iframe>`, { waitUntil: "load", timeout: 20_000 })
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!
      // the browser refused the page in the frame (an error page instead): none of its markup is there
      const framed = await frame.evaluate("document.getElementById('api-reference-container') !== null").catch(() => false)
      expect(framed).toBe(false)
    } finally {
      await context.close()
    }
  })
})
