/**
 * Starts the real `gateway` command on an ephemeral port with a configuration written to a
 * temporary folder, and offers small HTTP helpers to talk to it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export const gatewayBin = path.join(repoRoot, "bin/gateway.ts")

/** Writes files (relative path -> content) into a new temporary folder and returns it. */
export const writeFiles = (files: Readonly<Record<string, string>>): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-test-"))
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  return dir
}

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI to completion (for start-up failures and one-shot commands). */
export const runGateway = (args: ReadonlyArray<string>, options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  new Promise<RunResult>((resolve, reject) => {
    const child = spawn(process.execPath, [gatewayBin, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...options.env }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (data) => (stdout += data))
    child.stderr.on("data", (data) => (stderr += data))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`gateway did not exit within ${options.timeoutMs ?? 15_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 15_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

export interface RunningGateway {
  readonly url: string
  readonly process: ChildProcess
  /** everything the gateway wrote to stderr (its log) so far */
  readonly log: () => string
  /** POSTs JSON and returns status and parsed body */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>
  get(path: string): Promise<{ status: number; body: any }>
  /** POSTs and collects the `data:` events of a streamed answer */
  stream(path: string, body: unknown): Promise<{ status: number; events: Array<any>; raw: string }>
  /** SIGTERM, then waits for the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export interface StartOptions {
  /** TOML text of config.toml */
  readonly config?: string
  /** other files next to config.toml */
  readonly files?: Readonly<Record<string, string>>
  readonly env?: Record<string, string>
  readonly args?: ReadonlyArray<string>
}

export const startGateway = async (options: StartOptions): Promise<RunningGateway> => {
  const dir = writeFiles({ "config.toml": options.config ?? "", ...options.files })
  const args = options.args ?? ["--config-file", path.join(dir, "config.toml")]
  const child = spawn(process.execPath, [gatewayBin, ...args], {
    cwd: dir,
    env: { ...process.env, GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...options.env }
  })
  let stderr = ""
  let stdout = ""
  child.stdout!.on("data", (data) => (stdout += data))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${stderr}${stdout}`)), 15_000)
    child.stderr!.on("data", (data) => {
      stderr += data
      const match = /Listening on (http:\/\/[^\s"]+)/.exec(stderr)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`gateway exited with ${code} before listening:\n${stderr}${stdout}`))
    })
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    url,
    process: child,
    log: () => stderr,
    async post(route, body, headers = {}) {
      const response = await fetch(url + route, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body)
      })
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {
        // not JSON: keep the text so the test can show it
      }
      return { status: response.status, body: parsed, headers: response.headers }
    },
    async get(route) {
      const response = await fetch(url + route)
      const text = await response.text()
      return { status: response.status, body: JSON.parse(text) }
    },
    async stream(route, body) {
      const response = await fetch(url + route, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const raw = await response.text()
      const events = raw.split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => {
        const data = block.slice("data: ".length)
        return data === "[DONE]" ? "[DONE]" : JSON.parse(data)
      })
      return { status: response.status, events, raw }
    },
    stop(signal = "SIGTERM") {
      child.kill(signal)
      return exited
    }
  }
}
