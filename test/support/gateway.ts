/**
 * Starts the real `gateway` command on an ephemeral port with a configuration written to a
 * temporary folder, and offers small HTTP helpers to talk to it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export const gatewayBin = path.join(repoRoot, "bin/gateway.ts")

/** Writes files (relative path -> content) into a new temporary folder and returns it. */
export const writeFiles = (files: Readonly<Record<string, string>>): string => {
  const dir = fs.mkdtempSync(path.join(process.env.GATEWAY_TEST_SCRATCH ?? os.tmpdir(), "gateway-test-"))
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  return dir
}

/** An environment for a child: `process.env` with `overrides` applied; an undefined value removes the variable. */
const childEnv = (...overrides: ReadonlyArray<Readonly<Record<string, string | undefined>> | undefined>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const override of overrides) {
    for (const [name, value] of Object.entries(override ?? {})) {
      if (value === undefined) delete env[name]
      else env[name] = value
    }
  }
  return env
}

export interface RawResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

/**
 * One HTTP request over a fresh connection (no keep-alive pool), with full control over the
 * method and the body: `chunks` are sent with chunked transfer encoding (no content-length).
 * Once an answer has arrived, an error writing the rest of the body (the server stopped
 * reading it, as after a 413) does not fail the request.
 */
export const rawRequest = (
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; chunks?: ReadonlyArray<string> } = {}
) =>
  new Promise<RawResponse>((resolve, reject) => {
    let answered = false
    const request = http.request(url, { method: options.method ?? "GET", headers: options.headers, agent: false }, (response) => {
      answered = true
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (data) => (text += data))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }))
      response.on("error", reject)
      // settles nothing after "end"; otherwise the connection broke in the middle of the answer
      response.on("close", () => reject(new Error(`connection closed during the answer: ${text}`)))
    })
    request.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (options.chunks !== undefined) {
      for (const chunk of options.chunks) request.write(chunk)
    } else if (options.body !== undefined) {
      request.write(options.body)
    }
    request.end()
  })

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a command to completion in `env` (as it is), killed after `timeoutMs`; `what` names it in
 * that error. `stdin: "ignore"` gives it an empty standard input (a pipe left open otherwise).
 */
export const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly what: string; readonly env: NodeJS.ProcessEnv; readonly cwd: string; readonly timeoutMs: number; readonly stdin?: "ignore" }
) =>
  new Promise<RunResult>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: [options.stdin ?? "pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (data) => (stdout += data))
    child.stderr!.on("data", (data) => (stderr += data))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${options.what} did not exit within ${options.timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Runs the CLI to completion (for start-up failures and one-shot commands). */
export const runGateway = (
  args: ReadonlyArray<string>,
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}
) =>
  runCommand(process.execPath, [gatewayBin, ...args], {
    what: "gateway",
    env: childEnv(options.env),
    cwd: options.cwd ?? repoRoot,
    timeoutMs: options.timeoutMs ?? 15_000
  })

export interface RunningGateway {
  readonly url: string
  /** the temporary folder holding config.toml and the other files; the gateway's working directory */
  readonly dir: string
  readonly process: ChildProcess
  /** everything the gateway wrote to stderr (its log) so far */
  readonly log: () => string
  /** POSTs JSON and returns status and parsed body */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>
  get(path: string): Promise<{ status: number; body: any; headers: Headers }>
  /** POSTs and collects the `data:` events of a streamed answer */
  stream(path: string, body: unknown): Promise<{ status: number; events: Array<any>; raw: string; headers: Headers }>
  /** SIGTERM, then waits for the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export interface StartOptions {
  /** TOML text of config.toml */
  readonly config?: string
  /** other files next to config.toml */
  readonly files?: Readonly<Record<string, string>>
  /** added to (or, with an undefined value, removed from) the environment */
  readonly env?: Record<string, string | undefined>
  /** replace `--config-file <dir>/config.toml`; the working directory is the temporary folder */
  readonly args?: ReadonlyArray<string>
  /** how long it may take to listen (15 s; an embedded database created at start needs more on a loaded machine) */
  readonly startTimeoutMs?: number
}

export const startGateway = async (options: StartOptions): Promise<RunningGateway> => {
  const dir = writeFiles({ "config.toml": options.config ?? "", ...options.files })
  const args = options.args ?? ["--config-file", path.join(dir, "config.toml")]
  const child = spawn(process.execPath, [gatewayBin, ...args], {
    cwd: dir,
    env: childEnv({ GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }, options.env)
  })
  let stderr = ""
  let stdout = ""
  child.stdout!.on("data", (data) => (stdout += data))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // not left running: it may hold a port, a folder's lock
      child.kill("SIGKILL")
      reject(new Error(`gateway did not start:\n${stderr}${stdout}`))
    }, options.startTimeoutMs ?? 15_000)
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
    dir,
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
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {
        // not JSON: keep the text so the test can show it
      }
      return { status: response.status, body: parsed, headers: response.headers }
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
      return { status: response.status, events, raw, headers: response.headers }
    },
    stop(signal = "SIGTERM") {
      child.kill(signal)
      return exited
    }
  }
}
