/**
 * Issue 33, finding 4 and the embedded database's lock, over real HTTP against real gateway
 * processes on the embedded database (`pglite://`).
 *
 * A full disk: the database's folder on a small filesystem of its own (a tmpfs, mounted by the
 * test as root), filled by a filler file. With the free-space watch on, writes pause before the
 * disk is full: every request is still answered, `/health` says why at once, the write queue
 * counts its refused tries and keeps the rows, which are stored once the space is back; a
 * SIGTERM meanwhile ends the process promptly and logs what it could not store. With the watch
 * off, PGlite meets the full disk itself (a PANIC on a WAL write, after which it would spin
 * for good): it runs in a thread of its own, so the gateway keeps answering, `/health` says
 * the database is down, and once space is freed PGlite is started again and the rows answered
 * meanwhile are stored; a SIGTERM while it is down ends the process promptly.
 *
 * The lock: a lock file naming a zombie or an unrelated live process does not refuse a start;
 * a gateway killed with SIGKILL is followed at once by the next; eight processes trying for a
 * folder at the same moment, over the lock file of a holder that died, leave it to exactly one
 * (the former remove-then-create takeover gave it to two in about a third of such rounds); two
 * gateways racing for one folder leave exactly one serving, the other refused naming it.
 */
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll, waitForInferences } from "../support/observability.ts"
import { mountSmallFilesystem, type SmallFilesystem } from "../support/smallFilesystem.ts"

const mib = 1024 * 1024
/** PGlite creates its database at the first start: seconds of CPU, many more on a loaded machine */
const startTimeout = 120_000
const caseTimeout = 240_000

const configWith = (embedded: string) => `
${observabilityToml({ flushIntervalMs: 50 })}
[gateway.embedded_database]
${embedded}
`

/** the samples of a `/metrics` scrape, by name (and label text) */
const samplesOf = (text: string): Map<string, number> => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line)
    if (match !== null) samples.set(match[1], Number(match[2]))
  }
  return samples
}

const metric = async (gateway: RunningGateway, name: string) => {
  const response = await fetch(`${gateway.url}/metrics`)
  return samplesOf(await response.text()).get(name) ?? 0
}

/** SIGTERM, and the exit code if the process ends within `ms` (undefined if it does not) */
const stopWithin = (gateway: RunningGateway, ms: number) =>
  Promise.race([gateway.stop(), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref())])

const infer = (gateway: RunningGateway, text: string) =>
  gateway.post("/inference", { model_name: "dummy::echo_request_messages", input: { messages: [{ role: "user", content: text }] } })

/** `count` inferences, every one answered 200: their ids */
const answered = async (gateway: RunningGateway, count: number, label: string) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const answer = await infer(gateway, `${label} ${i}`)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    ids.push(answer.body.inference_id)
  }
  return ids
}

/** the log lines matching `pattern` (the pretty format: `[time] LEVEL (#fiber): message`) */
const linesOf = (gateway: RunningGateway, pattern: RegExp) => gateway.log().split("\n").filter((line) => pattern.test(line))
/** the lines of the gateway's own messages starting with `start` */
const logged = (gateway: RunningGateway, start: string) => linesOf(gateway, new RegExp(`^\\[[^\\]]+\\] [A-Z]+ \\(#\\d+\\): ${start}`))

describe("the embedded database on a full disk", () => {
  let disk: SmallFilesystem
  let url: string
  let gateway: RunningGateway | undefined
  const start = (embedded: string) =>
    startGateway({ config: configWith(embedded), env: { GATEWAY_ANALYTICS_DB_URL: url, GATEWAY_RELATIONAL_DB_URL: url }, startTimeoutMs: startTimeout })

  beforeAll(() => {
    // room for the database as its migrations leave it, and for the 16 MB WAL segments a PANIC needs (at 64 MB, a
    // disk filled "but 8 MB" left too little to free for PGlite to start again once the tables grew)
    disk = mountSmallFilesystem(128)
    url = `pglite://${path.join(disk.dir, "data")}`
  })

  afterAll(async () => {
    if (gateway !== undefined && gateway.process.exitCode === null) await stopWithin(gateway, 15_000)
    if (gateway?.process.exitCode === null) gateway.process.kill("SIGKILL")
    disk?.release()
  })

  it("pauses writes below min_free_bytes: answers, says why on /health, counts the refused tries, and stores the rows once space is back", async () => {
    gateway = await start(`min_free_bytes = ${8 * mib}\nfree_space_check_interval_ms = 100`)
    const [before] = await answered(gateway, 1, "before")
    await waitForInferences(gateway, [before])
    expect(await gateway.get("/health")).toMatchObject({ status: 200, body: { gateway: "ok", postgres: "ok", embedded_database: "ok" } })

    disk.fill(4 * mib)
    const paused = await poll("/health to say writes are paused", async () => {
      const health = await gateway!.get("/health")
      return health.status === 503 ? health : undefined
    })
    expect(paused.body).toMatchObject({ gateway: "ok", postgres: "ok", embedded_database: "writes_paused" })
    expect(paused.body.error).toMatch(/^embedded database: \d\.\d MB free in .*, below min_free_bytes \(8\.0 MB; writes resume at 8\.8 MB\)$/)

    const during = await answered(gateway, 5, "while paused")
    const status = await gateway.get("/status")
    expect(status.body.embedded_databases).toEqual([expect.objectContaining({ state: "writes_paused", min_free_bytes: 8 * mib })])
    await poll("refused tries counted", async () => ((await metric(gateway!, "gateway_write_queue_failed_attempts_total")) > 0 ? true : undefined))
    expect((await gateway.get("/status")).body.observability).toMatchObject({ queued: 5, written: 1, dropped: 0, rejected: 0 })
    expect(logged(gateway, "embedded database: writes paused"), gateway.log()).toHaveLength(1)
    expect(linesOf(gateway, /observability write failed .*writes paused/).length).toBeGreaterThan(0)

    disk.unfill()
    await poll("/health to be ok again", async () => ((await gateway!.get("/health")).status === 200 ? true : undefined))
    expect((await waitForInferences(gateway, during, { timeoutMs: 30_000 })).map((inference) => inference.inference_id)).toEqual(during)
    expect(logged(gateway, "embedded database: writes resume"), gateway.log()).toHaveLength(1)
    expect((await gateway.get("/status")).body.observability).toMatchObject({ queued: 0, written: 6, dropped: 0, rejected: 0 })
  }, caseTimeout)

  it("ends promptly on SIGTERM while writes are paused, logging how many units it could not store", async () => {
    disk.fill(4 * mib)
    await poll("/health to say writes are paused", async () => ((await gateway!.get("/health")).status === 503 ? true : undefined))
    await answered(gateway!, 3, "before the stop")
    expect(await stopWithin(gateway!, 15_000)).toBe(0)
    expect(linesOf(gateway!, /could not write 3 queued units before stopping: writes are paused \(.*below min_free_bytes/), gateway!.log()).toHaveLength(1)
    disk.unfill()
  }, caseTimeout)

  /**
   * Fills the disk but 8 MB, then moves PGlite's WAL on from segment to segment (a commit,
   * then `pg_switch_wal()`, a dozen times, through the port the gateway serves the database on,
   * named in gateway.lock) until it needs a new 16 MB segment file, which the disk cannot hold:
   * the PANIC PGlite met at 98% full, without 16 MB of writes first, whatever segments its last
   * checkpoint kept for reuse. The session that meets it is cut off: its errors are expected.
   */
  const driveToPanic = async () => {
    disk.fill(8 * mib)
    const port = fs.readFileSync(path.join(disk.dir, "data", "gateway.lock"), "utf8").trim().split(/\s+/)[1]
    const steps = Array.from({ length: 12 }, () => ["-c", "SELECT txid_current()", "-c", "SELECT pg_switch_wal()"]).flat()
    await promisify(execFile)("psql", ["-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "postgres", "-At", ...steps]).catch(() => undefined)
  }
  const panics = () => logged(gateway!, "embedded database: PGlite stopped on a PANIC")

  it("survives PGlite's PANIC on a full disk (the watch off): answers, says so on /health, and stores what it answered once space is back", async () => {
    // the watch measures once a minute: the restart must not wait on its figure from before the fill (it did, for good)
    gateway = await start("min_free_bytes = 0\nfree_space_check_interval_ms = 60000")
    const [before] = await answered(gateway, 1, "before the PANIC")
    await waitForInferences(gateway, [before])
    await driveToPanic()
    const during = await answered(gateway, 5, "after PGlite stopped")
    await poll("PGlite's PANIC", async () => (panics().length > 0 ? true : undefined), { timeoutMs: 60_000, last: () => gateway!.log() })
    expect(panics()[0]).toMatch(/No space left on device/)

    // the gateway's event loop is free: /health answers at once, and says why
    const health = await gateway.get("/health")
    expect(health.status).toBe(503)
    expect(health.body).toMatchObject({ gateway: "ok", postgres: "error", embedded_database: "restarting" })
    expect(health.body.error).toMatch(/embedded database: PGlite (stopped on a PANIC \(.*No space left on device|is stopped until there is free space|is starting again)/)
    const meanwhile = await answered(gateway, 3, "while PGlite is down")
    await poll("refused tries counted", async () => ((await metric(gateway!, "gateway_write_queue_failed_attempts_total")) > 0 ? true : undefined))

    disk.unfill()
    await poll("/health to be ok again", async () => ((await gateway!.get("/health")).status === 200 ? true : undefined), { timeoutMs: 120_000 })
    expect(logged(gateway, "embedded database: PGlite serves again"), gateway.log()).toHaveLength(1)
    const ids = [...during, ...meanwhile]
    expect((await waitForInferences(gateway, ids, { timeoutMs: 30_000 })).map((inference) => inference.inference_id)).toEqual(ids)
    expect((await gateway.get("/status")).body).toMatchObject({
      observability: { queued: 0, dropped: 0, rejected: 0 },
      embedded_databases: [expect.objectContaining({ state: "ok", restarts: 1 })]
    })
  }, caseTimeout)

  it("ends promptly on SIGTERM while PGlite is down after a PANIC, logging how many units it could not store", async () => {
    await driveToPanic()
    await answered(gateway!, 2, "before the stop")
    await poll("PGlite's second PANIC", async () => (panics().length > 1 ? true : undefined), { timeoutMs: 60_000, last: () => gateway!.log() })
    expect(await stopWithin(gateway!, 15_000)).toBe(0)
    expect(linesOf(gateway!, /could not write 2 queued units before stopping: writes are paused \(PGlite (stopped on a PANIC|is)/), gateway!.log()).toHaveLength(1)
    disk.unfill()
  }, caseTimeout)
})

describe("the embedded database's lock", () => {
  let folder: string
  let url: string
  const started: Array<RunningGateway> = []
  const env = () => ({ GATEWAY_ANALYTICS_DB_URL: url, GATEWAY_RELATIONAL_DB_URL: url })
  const lockFile = () => path.join(folder, "data", "gateway.lock")
  const start = async () => {
    const gateway = await startGateway({ config: "", env: env(), startTimeoutMs: startTimeout })
    started.push(gateway)
    return gateway
  }

  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-embedded-lock-"))
    url = `pglite://${path.join(folder, "data")}`
  })

  afterAll(async () => {
    for (const gateway of started) if (gateway.process.exitCode === null && gateway.process.signalCode === null) gateway.process.kill("SIGKILL")
    fs.rmSync(folder, { recursive: true, force: true })
  })

  it("takes no lock file naming a zombie or a live process other than a holder for a holder", async () => {
    // a zombie: the child of `sleep 0 &`, whose parent became `sleep 60` and never waits for it
    const shell = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 60"])
    try {
      const zombie = Number(await new Promise<string>((resolve) => shell.stdout.once("data", (data) => resolve(String(data)))))
      await poll("a zombie", async () => (/^\d+ \(sleep\) Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, "utf8")) ? true : undefined))
      const created = await runGateway(["--create-api-key"], { env: { GATEWAY_RELATIONAL_DB_URL: url }, timeoutMs: startTimeout })
      expect(created.code, created.stderr).toBe(0)
      fs.writeFileSync(lockFile(), `${zombie} 1\n`)
      const again = await runGateway(["--create-api-key"], { env: { GATEWAY_RELATIONAL_DB_URL: url }, timeoutMs: startTimeout })
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout.trim()).toMatch(/^sk-gw-[a-z0-9]{12}-/)
    } finally {
      shell.kill("SIGKILL")
    }
    // a pid that another program has now (this test's own): the same
    fs.writeFileSync(lockFile(), `${process.pid} 1\n`)
    const reused = await runGateway(["--create-api-key"], { env: { GATEWAY_RELATIONAL_DB_URL: url }, timeoutMs: startTimeout })
    expect(reused.code, reused.stderr).toBe(0)
  }, caseTimeout)

  it("starts at once after the gateway holding the folder was killed with SIGKILL", async () => {
    const killed = await start()
    killed.process.kill("SIGKILL")
    // no wait for its exit to be seen: the kernel drops its lock as the process dies
    const next = await start()
    expect((await next.get("/health")).status).toBe(200)
    expect(fs.readFileSync(lockFile(), "utf8")).toMatch(new RegExp(`^${next.process.pid} \\d+\\n$`))
    expect(await stopWithin(next, 15_000)).toBe(0)
    expect(fs.existsSync(lockFile())).toBe(false)
  }, caseTimeout)

  it("gives the folder to exactly one of eight processes trying at the same moment, over the lock file of a holder that died, round after round", async () => {
    const contender = path.join(repoRoot, "test/support/lockContender.ts")
    fs.mkdirSync(path.join(folder, "race"), { recursive: true })
    for (let round = 0; round < 8; round++) {
      const go = path.join(folder, `go-${round}`)
      const contenders = Array.from({ length: 8 }, () => spawn(process.execPath, [contender, path.join(folder, "race"), go]))
      const lines = contenders.map((child) => {
        let output = ""
        child.stdout.on("data", (data) => (output += data))
        return () => output.split("\n").filter((line) => line !== "")
      })
      try {
        await poll("every contender ready", async () => (lines.every((seen) => seen().includes("ready")) ? true : undefined), { timeoutMs: 60_000 })
        fs.writeFileSync(go, "")
        const outcomes = await poll("every contender's try", async () => {
          const tried = lines.map((seen) => seen()[1])
          return tried.every((outcome) => outcome !== undefined) ? tried : undefined
        }, { timeoutMs: 60_000 })
        expect(outcomes.filter((outcome) => outcome === "Locked"), `round ${round}: ${outcomes.join(" ")}`).toHaveLength(1)
        expect(outcomes.filter((outcome) => outcome === "Held")).toHaveLength(7)
      } finally {
        // they exit without releasing: the winner's pid stays in the lock file, a dead holder's for the next round
        for (const child of contenders) child.stdin.end()
        await Promise.all(contenders.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once("exit", resolve)) : undefined)))
      }
    }
  }, caseTimeout)

  it("lets exactly one of two gateways racing for the folder (over a stale lock file) serve, and refuses the other naming it", async () => {
    const dead = spawn("true")
    await new Promise((resolve) => dead.once("exit", resolve))
    fs.writeFileSync(lockFile(), `${dead.pid} 1\n`)
    const outcomes = await Promise.allSettled([start(), start()])
    const winners = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []))
    const losers = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [String(outcome.reason)] : []))
    expect(winners, losers.join("\n")).toHaveLength(1)
    expect(losers).toHaveLength(1)
    const [winner] = winners
    expect(losers[0]).toMatch(new RegExp(`exited with 1 before listening:[\\s\\S]*the embedded database in .* is in use by process ${winner.process.pid}:`))
    expect((await winner.get("/health")).status).toBe(200)
    // and a second one while it serves: refused, naming it
    const refused = await runGateway(["--config-file", path.join(winner.dir, "config.toml")], { env: { ...env(), GATEWAY_BIND_ADDRESS: "127.0.0.1:0" } })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`is in use by process ${winner.process.pid}`)
    expect(await stopWithin(winner, 15_000)).toBe(0)
  }, caseTimeout)
})
