/**
 * `[gateway] template_filesystem_access.base_path` is a boundary (issue 33): a template's
 * `{% include %}` may name files below it (subfolders, links that stay inside), and the gateway
 * refuses to start, or to reload, on one that names an absolute path, climbs out with `..`, or
 * follows a link out of it, saying which template and why, without reading the file.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../support/access.ts"
import { runGateway, type RunningGateway, startGateway, writeFiles } from "../support/gateway.ts"

const config = `
[gateway]
template_filesystem_access.base_path = "prompts"

[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "system.minijinja"
`

/** a file outside the base path that no include may read */
const outside = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-outside-"))
const secretFile = path.join(outside, "secret.txt")
fs.writeFileSync(secretFile, "THE-SECRET-OUTSIDE")

const goodSystem = `{% include "header.minijinja" %} {% include "partials/rules.minijinja" %} {% include "linked.minijinja" %} {% include "shared/rules.minijinja" %}`

/** the gateway's files: templates under prompts/, with links that stay inside it */
const writeGateway = (system: string): string => {
  const dir = writeFiles({
    "config.toml": config,
    "system.minijinja": system,
    "prompts/header.minijinja": "Header.",
    "prompts/partials/rules.minijinja": "Rules."
  })
  // a link to a file inside, and a linked folder inside
  fs.symlinkSync(path.join(dir, "prompts/partials/rules.minijinja"), path.join(dir, "prompts/linked.minijinja"))
  fs.symlinkSync(path.join(dir, "prompts/partials"), path.join(dir, "prompts/shared"))
  // links out: a file, and a folder
  fs.symlinkSync(secretFile, path.join(dir, "prompts/leak.minijinja"))
  fs.symlinkSync(outside, path.join(dir, "prompts/elsewhere"))
  return dir
}

const refusedIncludes: ReadonlyArray<readonly [include: string, why: string]> = [
  ["/etc/passwd", `loads "/etc/passwd": an absolute path is refused; included templates are named by a path below `],
  [secretFile, `an absolute path is refused`],
  ["../../../../etc/hostname", `loads "../../../../etc/hostname": a path segment starting with "." (such as "..") is refused`],
  ["partials/../../system.minijinja", `a path segment starting with "." (such as "..") is refused`],
  ["leak.minijinja", `loads "leak.minijinja", which resolves through a link to ${fs.realpathSync(secretFile)}, outside `],
  ["elsewhere/secret.txt", `loads "elsewhere/secret.txt", which resolves through a link to ${fs.realpathSync(secretFile)}, outside `]
]

afterAll(() => {
  fs.rmSync(outside, { recursive: true, force: true })
})

describe("template includes under template_filesystem_access.base_path", () => {
  let gateway: RunningGateway
  let dir: string

  beforeAll(async () => {
    dir = writeGateway(goodSystem)
    gateway = await startGateway({ args: ["--config-file", path.join(dir, "config.toml")] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const systemEchoed = async () => {
    const answer = await gateway.post("/inference", { function_name: "greet", input: { messages: [{ role: "user", content: "Hi" }] } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return JSON.parse(answer.body.content[0].text).system
  }

  it("renders includes from the base path, its subfolders and links that stay inside it", async () => {
    expect(await systemEchoed()).toBe("Header. Rules. Rules. Rules.")
  })

  it.each(refusedIncludes)("refuses to start when a template includes %s, saying why, and reads nothing outside", async (include, why) => {
    const refusedDir = writeGateway(`Hello {% include "${include}" %}`)
    const result = await runGateway(["--config-file", path.join(refusedDir, "config.toml")], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }, cwd: refusedDir })
    expect(result.code, result.stderr).not.toBe(0)
    expect(result.stderr).not.toContain("Listening on")
    expect(result.stderr).toContain("the configuration is invalid (1 problem)")
    expect(result.stderr).toContain(`functions.greet.variants.only.templates.system.path: template ${path.join(refusedDir, "system.minijinja")} `)
    expect(result.stderr).toContain(why)
    expect(result.stderr).not.toContain("THE-SECRET-OUTSIDE")
  })

  it("refuses a reload whose template includes a file outside, and keeps serving the configuration it had", async () => {
    const before = await systemEchoed()
    fs.writeFileSync(path.join(dir, "system.minijinja"), `{% include "leak.minijinja" %}`)
    const answer = await call(gateway, "POST", "/internal/config/reload")
    expect(answer.status).toBe(400)
    expect(answer.body.errors).toEqual([expect.stringContaining(`loads "leak.minijinja", which resolves through a link to ${fs.realpathSync(secretFile)}, outside `)])
    expect(JSON.stringify(answer.body)).not.toContain("THE-SECRET-OUTSIDE")
    expect(await systemEchoed()).toBe(before)
  })
})
