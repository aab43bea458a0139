/**
 * The README's first loop, exactly as written: `npm start`'s command (`bin/start.mjs
 * --quickstart`) in an empty folder with no database configured and no server running, then the
 * shell commands of the README block marked `quickstart-loop` (only its address changed to the
 * free port the gateway took): an inference, feedback on it, a dataset of the inferences rated
 * good, an evaluation run of each of two variants. Everything lands in the embedded database in
 * `.gateway-data/` of that folder.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/gateway.ts"

/** the commands of the README block between the quickstart-loop markers */
const readmeLoop = (): string => {
  const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8")
  const block = /<!-- quickstart-loop[^>]*-->\n```sh\n([\s\S]*?)```\n<!-- \/quickstart-loop -->/.exec(readme)
  if (block === null) throw new Error("README.md has no quickstart-loop block")
  return block[1]
}

/** the events of the Server-Sent Event streams in `text`, as JSON */
const events = (text: string): Array<any> =>
  [...text.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]))

describe("the README's quickstart loop", () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-quickstart-"))
  let gateway: ChildProcess | undefined

  afterAll(async () => {
    if (gateway !== undefined && gateway.exitCode === null) {
      gateway.kill("SIGTERM")
      await new Promise((resolve) => gateway!.once("exit", resolve))
    }
    fs.rmSync(folder, { recursive: true, force: true })
  })

  it("stores an inference and its feedback, makes a dataset of it and evaluates two variants on it", async () => {
    const env: Record<string, string> = { ...process.env as Record<string, string>, GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    delete env.GATEWAY_ANALYTICS_DB_URL
    delete env.GATEWAY_RELATIONAL_DB_URL
    gateway = spawn(process.execPath, [path.join(repoRoot, "bin/start.mjs"), "--quickstart"], { cwd: folder, env })
    let log = ""
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the quickstart did not start:\n${log}`)), 60_000)
      gateway!.stderr!.on("data", (data) => {
        log += data
        const listening = /Listening on http:\/\/([^\s"]+)/.exec(log)
        if (listening !== null) {
          clearTimeout(timer)
          resolve(listening[1])
        }
      })
      gateway!.on("exit", (code) => reject(new Error(`the quickstart exited with ${code}:\n${log}`)))
    })
    expect(log).toContain(`embedded database: ${path.join(folder, ".gateway-data")}`)

    const script = readmeLoop().replaceAll("localhost:3000", address)
    const { stdout } = await promisify(execFile)("sh", ["-e", "-c", script], {
      cwd: folder,
      // the README's `node` is whichever the machine has: this one
      env: { ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH}` },
      timeout: 60_000
    })
    expect(stdout).toMatch(/\{"ids":\["[0-9a-f-]{36}"\]\}/)
    const summaries = events(stdout).filter((event) => event.type === "summary")
    expect(summaries.map((summary) => [summary.variant_name, summary.status, summary.summary.mentions_haiku.mean])).toEqual([
      ["echo", "completed", 1],
      ["fixed", "completed", 0]
    ])
    expect(fs.existsSync(path.join(folder, ".gateway-data", "pgdata"))).toBe(true)

    // `npm run gateway -- --create-api-key` beside it: a key of the same database, through the running gateway
    const created = await promisify(execFile)(process.execPath, [path.join(repoRoot, "bin/start.mjs"), "--create-api-key"], { cwd: folder, env, timeout: 60_000 })
    expect(created.stdout.trim()).toMatch(/^sk-gw-[a-z0-9]{12}-\S+$/)
    expect(created.stderr).toContain("API keys of the embedded database in .gateway-data")
  }, 120_000)
})
