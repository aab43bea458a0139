/**
 * Durable tasks on pg-boss (layers/tasks/pgBoss.ts) in one process, on a database of their own:
 * a task runs and its result, progress and failure are readable with `get`; failures are
 * retried; a task declined (its configuration cannot run it) goes to another instance without
 * using up its tries, and fails once declined for longer than the bound by every instance that
 * runs its kind (not while one is busy); `ensureRunning` stops a cancelled run; keys deduplicate; `afterS` delays; cancelling; `exclusive` serialises sections
 * holding the same key (also between two instances), `tryExclusive` skips them while the key is
 * held; `claim` is true once per interval per key; without a relational database every
 * operation is a 503 naming the variable. Several processes: test/integration/tasks-processes.test.ts.
 * All of it on Postgres, on Postgres through PgBouncer in transaction pooling mode (no session
 * survives a transaction there), and on the embedded database (PGlite), but for `exclusive`
 * between two instances: one process owns an embedded database, and excludes with in-process locks.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StartupError } from "../../layers/startup.ts"
import { TasksLive } from "../../layers/tasks/index.ts"
import { cronEvery } from "../../layers/tasks/pgBoss.ts"
import { ServiceUnavailable } from "../../src/errors.ts"
import { declineTask, Tasks } from "../../src/tasks/service.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { freshDatabaseBehindPgBouncer } from "../support/pgbouncer.ts"
import { migrateDatabase, type OpenTasks, openTasks, quickTasks, run, sleep, type TasksService, untilState, waitFor } from "../support/tasks.ts"

type Service = TasksService
const until = untilState

/** a promise and what settles it, for handlers that wait for the test */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

// on the Postgres server, on it through PgBouncer in transaction pooling mode, and on the
// embedded database (PGlite behind pglite-socket), reached as Postgres
describe.each(["postgres", "pgbouncer", "pglite"] as const)("tasks on pg-boss on %s", (backend) => {
  let database: TestDatabase
  let first: OpenTasks
  let second: OpenTasks

  beforeAll(async () => {
    database = backend === "pgbouncer" ? await freshDatabaseBehindPgBouncer() : await freshDatabase(backend)
    await migrateDatabase(database.url)
    first = await openTasks(database.url)
    second = await openTasks(database.url)
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await database?.drop()
  })

  describe("running", () => {
    it("runs an enqueued task once and get shows it completed with its result, payload and times", async () => {
      const { tasks } = first
      const seen: Array<string> = []
      await run(tasks.register<{ n: number }>("double", (task) =>
        Effect.sync(() => {
          seen.push(task.id)
          return { doubled: task.payload.n * 2 }
        })))
      const id = (await run(tasks.enqueue("double", { n: 21 })))!
      expect(id).toMatch(/^[0-9a-f-]{36}$/)

      const done = await until(tasks, id, "completed")
      expect(done).toMatchObject({ id, kind: "double", state: "completed", payload: { n: 21 }, result: { doubled: 42 } })
      expect(done.error).toBeUndefined()
      expect(done.startedAt).toBeGreaterThanOrEqual(done.createdAt)
      expect(done.completedAt).toBeGreaterThanOrEqual(done.startedAt!)
      expect(seen).toEqual([id])
      // the other instance (another process) reads the same
      expect(await run(second.tasks.get(id))).toEqual(done)
    })

    it("shows the progress a running task reported, from another instance, and keeps it after the task completed", async () => {
      const release = gate()
      await run(first.tasks.register<{ steps: number }>("progressing", (task) =>
        Effect.gen(function*() {
          yield* task.progress({ done: 1, of: task.payload.steps })
          yield* Effect.promise(() => release.opened)
          return "finished"
        })))
      const id = (await run(first.tasks.enqueue("progressing", { steps: 3 })))!

      const running = (await waitFor(() => run(second.tasks.get(id)), (info) => info?.progress !== undefined))!
      expect(running).toMatchObject({ state: "running", progress: { done: 1, of: 3 } })
      expect(running.startedAt).toBeGreaterThanOrEqual(running.createdAt)
      expect(running.completedAt).toBeUndefined()

      release.open()
      expect(await until(second.tasks, id, "completed")).toMatchObject({ result: "finished", progress: { done: 1, of: 3 } })
    })

    it("retries a failing task up to its retryLimit, then shows it failed with the handler's message", async () => {
      let attempts = 0
      await run(first.tasks.register("flaky", () =>
        Effect.suspend(() => {
          attempts++
          return Effect.fail({ message: `upstream said no (attempt ${attempts})` })
        }), { retryLimit: 1 }))
      const id = (await run(first.tasks.enqueue("flaky", {})))!

      const failed = await until(first.tasks, id, "failed")
      expect(attempts).toBe(2)
      expect(failed.error).toBe("upstream said no (attempt 2)")
      expect(failed.result).toBeUndefined()
      expect(failed.completedAt).toBeGreaterThanOrEqual(failed.createdAt)
    })

    it("gives a run the checkpoint the previous run of the task saved, and none on its first run", async () => {
      const seen: Array<unknown> = []
      await run(first.tasks.register<{ steps: number }>("resumable", (task) =>
        Effect.gen(function*() {
          seen.push(task.resumeFrom)
          const from = (task.resumeFrom as { step: number } | undefined)?.step ?? 0
          for (let step = from + 1; step <= task.payload.steps; step++) {
            yield* task.checkpoint({ step })
            // the first run stops after its second step, as a crash would
            if (seen.length === 1 && step === 2) return yield* Effect.fail({ message: "stopped midway" })
          }
          return { resumedFrom: from }
        }), { retryLimit: 1 }))
      const id = (await run(first.tasks.enqueue("resumable", { steps: 4 })))!
      const done = await until(first.tasks, id, "completed")
      expect(seen).toEqual([undefined, { step: 2 }])
      expect(done.result).toEqual({ resumedFrom: 2 })
    })

    it("fails a task whose handler dies, with the defect's message", async () => {
      await run(first.tasks.register("dies", () => Effect.die(new Error("boom: no such field")), { retryLimit: 0 }))
      const id = (await run(first.tasks.enqueue("dies", {})))!
      expect((await until(first.tasks, id, "failed")).error).toBe("boom: no such field")
    })

    it("starts a task enqueued with afterS no earlier than that", async () => {
      await run(first.tasks.register("later", () => Effect.succeed("ran")))
      const id = (await run(first.tasks.enqueue("later", {}, { afterS: 3 })))!
      await sleep(1500)
      expect((await run(first.tasks.get(id)))?.state).toBe("queued")
      const done = await until(first.tasks, id, "completed")
      expect(done.startedAt! - done.createdAt).toBeGreaterThanOrEqual(3000)
    })
  })

  describe("queueing", () => {
    // no process registered these kinds: their tasks wait
    it("keeps one task per key waiting: enqueuing the same key again answers undefined, another key queues", async () => {
      const { tasks } = first
      const firstId = await run(tasks.enqueue("idle-keyed", { n: 1 }, { key: "batch-1" }))
      expect(firstId).toBeDefined()
      expect(await run(second.tasks.enqueue("idle-keyed", { n: 2 }, { key: "batch-1" }))).toBeUndefined()
      const otherKey = await run(tasks.enqueue("idle-keyed", { n: 3 }, { key: "batch-2" }))
      expect(otherKey).toBeDefined()
      // without a key, every task queues
      const unkeyed = await Promise.all([1, 2, 3].map((n) => run(tasks.enqueue("idle-keyed", { n }))))
      expect(new Set(unkeyed).size).toBe(3)
      expect(unkeyed).not.toContain(undefined)
      expect(await run(tasks.get(firstId!))).toMatchObject({ state: "queued", payload: { n: 1 }, kind: "idle-keyed" })

      // once the waiting one is gone, the key queues again
      expect(await run(tasks.cancel(firstId!))).toBe(true)
      expect(await run(tasks.enqueue("idle-keyed", { n: 4 }, { key: "batch-1" }))).toBeDefined()
    })

    it("cancels a queued task once: get shows it cancelled, a second cancel and an unknown id answer false", async () => {
      const id = (await run(first.tasks.enqueue("idle", { n: 1 })))!
      expect(await run(second.tasks.cancel(id))).toBe(true)
      expect(await run(first.tasks.get(id))).toMatchObject({ id, state: "cancelled", payload: { n: 1 } })
      expect(await run(first.tasks.cancel(id))).toBe(false)
      expect(await run(first.tasks.cancel("0191f0c0-0000-7000-8000-000000000000"))).toBe(false)
      expect(await run(first.tasks.cancel("not-a-uuid"))).toBe(false)
    })

    it("cancels a running task: its handler is interrupted at the next heartbeat and it is not retried", async () => {
      let runs = 0
      let interrupted = false
      await run(first.tasks.register("endless", () =>
        Effect.suspend(() => {
          runs++
          return Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
        }), { heartbeatS: 10 }))
      const id = (await run(first.tasks.enqueue("endless", {})))!
      await until(first.tasks, id, "running")
      expect(await run(second.tasks.cancel(id))).toBe(true)
      expect((await run(first.tasks.get(id)))?.state).toBe("cancelled")
      // heartbeats every 5 s
      await waitFor(async () => interrupted, (value) => value, 8_000)
      await sleep(1500)
      expect(runs).toBe(1)
      expect((await run(first.tasks.get(id)))?.state).toBe("cancelled")
    })

    it("answers undefined for an unknown id and for one that is not a UUID", async () => {
      expect(await run(first.tasks.get("0191f0c0-0000-7000-8000-000000000000"))).toBeUndefined()
      expect(await run(first.tasks.get("not-a-uuid"))).toBeUndefined()
      expect(await run(first.tasks.get(""))).toBeUndefined()
    })

    it("schedules a kind on a cron of whole minutes", async () => {
      await run(first.tasks.schedule("every-two-minutes", 110, { tick: true }))
      expect(await queryDatabase(database, "SELECT name, cron, data FROM gateway_tasks.schedule")).toEqual([
        { name: "every-two-minutes", cron: "*/2 * * * *", data: { tick: true } }
      ])
      expect([cronEvery(1), cronEvery(60), cronEvery(89), cronEvery(90), cronEvery(3600), cronEvery(86_400 * 2)])
        .toEqual(["*/1 * * * *", "*/1 * * * *", "*/1 * * * *", "*/2 * * * *", "0 */1 * * *", "0 0 * * *"])
    })
  })

  describe("declining", () => {
    it("hands a task its configuration cannot run to another instance, again and again without using up its tries", async () => {
      const declines: Array<string> = []
      // no tries after a failure: only declines that use up nothing let it reach the second instance
      await run(first.tasks.register<{ fn: string }>("picky", (task) =>
        Effect.suspend(() => {
          declines.push(task.id)
          return Effect.fail(declineTask(`function "${task.payload.fn}" is not configured`))
        }), { retryLimit: 0 }))
      const id = (await run(first.tasks.enqueue("picky", { fn: "summarize" })))!
      await waitFor(async () => declines.length, (count) => count >= 3, 20_000)
      const waiting = await run(second.tasks.get(id))
      expect(waiting?.state === "queued" || waiting?.state === "running").toBe(true)

      // each retry is a draw between the two instances' polls: the second wins one soon
      await run(second.tasks.register<{ fn: string }>("picky", (task) => Effect.succeed({ ranBy: "second", fn: task.payload.fn }), { retryLimit: 0 }))
      const done = await until(second.tasks, id, "completed", 60_000)
      expect(done.result).toEqual({ ranBy: "second", fn: "summarize" })
      expect(new Set(declines)).toEqual(new Set([id]))
    }, 90_000)

    it("fails a task every instance declined for longer than unrunnableTimeoutS, naming the last reason", async () => {
      const impatient = await openTasks(database.url, { ...quickTasks, unrunnableTimeoutS: 2 })
      try {
        let declines = 0
        await run(impatient.tasks.register("unrunnable", () =>
          Effect.suspend(() => {
            declines++
            return Effect.fail(declineTask(`function "gone" is not configured (decline ${declines})`))
          })))
        const id = (await run(impatient.tasks.enqueue("unrunnable", {})))!
        const failed = await until(first.tasks, id, "failed", 20_000)
        expect(failed.error).toBe(
          `no gateway whose configuration can run this task took it within 2 s: function "gone" is not configured (decline ${declines}) on the gateway that last tried`
        )
        expect(declines).toBeGreaterThan(1)
        expect(failed.result).toBeUndefined()
      } finally {
        await impatient.close()
      }
    }, 30_000)

    it("does not fail a declined task while a live instance that runs its kind is busy rather than declining, which runs it later", async () => {
      const impatient = await openTasks(database.url, { ...quickTasks, unrunnableTimeoutS: 1 })
      try {
        const release = gate()
        let blocking = false
        await run(impatient.tasks.register("busy", () => Effect.fail(declineTask(`function "long" is not configured`))))
        // one at a time: while it runs the blocker, only the impatient instance takes the other task
        await run(second.tasks.register<{ block: boolean }>("busy", (task) =>
          task.payload.block
            ? Effect.andThen(Effect.sync(() => (blocking = true)), Effect.promise(() => release.opened))
            : Effect.succeed("ran"), { concurrency: 1 }))
        await run(impatient.tasks.enqueue("busy", { block: true }))
        await waitFor(async () => blocking, (value) => value, 20_000)
        const waiting = (await run(impatient.tasks.enqueue("busy", { block: false })))!
        // declined again and again for longer than the impatient instance's bound
        await sleep(4000)
        expect(["queued", "running"]).toContain((await run(second.tasks.get(waiting)))?.state)
        release.open()
        expect((await until(second.tasks, waiting, "completed", 20_000)).result).toBe("ran")
      } finally {
        await impatient.close()
      }
    }, 45_000)

    it("ensureRunning interrupts a run whose task was cancelled through another instance, before its heartbeat would", async () => {
      let steps = 0
      let interrupted = false
      // heartbeats every 15 s: the interruption within 5 s below is ensureRunning's
      await run(first.tasks.register("stepping", (task) =>
        Effect.forever(Effect.andThen(task.ensureRunning, Effect.sync(() => steps++).pipe(Effect.andThen(Effect.sleep(50))))).pipe(
          Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
        ), { heartbeatS: 30 }))
      const id = (await run(first.tasks.enqueue("stepping", {})))!
      await waitFor(async () => steps, (count) => count > 0)
      expect(await run(second.tasks.cancel(id))).toBe(true)
      await waitFor(async () => interrupted, (value) => value, 5_000)
      const stepsThen = steps
      await sleep(500)
      expect(steps).toBe(stepsThen)
      expect((await run(first.tasks.get(id)))?.state).toBe("cancelled")
    })
  })

  describe("exclusive", () => {
    /** a section holding `key` for `ms`, answering when it started and ended */
    const section = (tasks: Service, key: string, ms = 300) =>
      run(tasks.exclusive(key, Effect.gen(function*() {
        const start = Date.now()
        yield* Effect.sleep(ms)
        return { start, end: Date.now() }
      })))

    const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end

    /**
     * Two instances stand for two gateway processes. One process owns an embedded database, and
     * its sections exclude one another with locks of that process (its clients share one
     * session, in which advisory locks exclude nothing): two instances in one process, each with
     * locks of its own, are no case of it. There the instance holding a lock waits itself.
     */
    const acrossInstances = backend !== "pglite"
    const holding = () => acrossInstances ? second.tasks : first.tasks

    it("runs sections on the same key one after the other in one instance", async () => {
      const [a, b, c] = await Promise.all([section(first.tasks, "shared"), section(first.tasks, "shared"), section(first.tasks, "shared")])
      expect([overlap(a, b), overlap(a, c), overlap(b, c)]).toEqual([false, false, false])
    })

    if (acrossInstances) {
      it("runs sections on the same key one after the other across two instances", async () => {
        const [c, d, e] = await Promise.all([section(first.tasks, "across"), section(second.tasks, "across"), section(second.tasks, "across")])
        expect([overlap(c, d), overlap(c, e), overlap(d, e)]).toEqual([false, false, false])
      })
    }

    it("runs sections on different keys at the same time", async () => {
      const [a, b] = await Promise.all([section(first.tasks, "left", 500), section(second.tasks, "right", 500)])
      expect(overlap(a, b)).toBe(true)
    })

    it("releases the lock when the section fails, dies or is interrupted, and passes on its failure", async () => {
      const failure = await run(Effect.flip(first.tasks.exclusive("released", Effect.fail("no luck" as const))))
      expect(failure).toBe("no luck")
      const died = await Effect.runPromiseExit(first.tasks.exclusive("released", Effect.die(new Error("defect"))))
      expect(Exit.isFailure(died)).toBe(true)
      const interrupted = await run(Effect.timeoutOption(first.tasks.exclusive("released", Effect.never), 300))
      expect(interrupted._tag).toBe("None")
      // a waiter interrupted while waiting leaves the lock to the next one
      const holder = section(holding(), "released", 800)
      await sleep(200)
      expect((await run(Effect.timeoutOption(first.tasks.exclusive("released", Effect.void), 200)))._tag).toBe("None")
      const after = await holder
      const next = await section(first.tasks, "released", 10)
      expect(next.start).toBeGreaterThanOrEqual(after.end)
      expect(next.start - after.end).toBeLessThan(1000)
    })

    it("tryExclusive runs the section when the lock is free, and answers none at once, without running it, while another holds it", async () => {
      expect(await run(first.tasks.tryExclusive("tried", Effect.succeed(1)))).toMatchObject({ _tag: "Some", value: 1 })
      const holder = section(holding(), "tried", 2000)
      await sleep(300)
      let ran = false
      const tries = await Promise.all([0, 1, 2].map(() => run(first.tasks.tryExclusive("tried", Effect.sync(() => (ran = true))))))
      const triesEnded = Date.now()
      expect(tries.map((tried) => tried._tag)).toEqual(["None", "None", "None"])
      expect(ran).toBe(false)
      // they did not wait for the lock
      const after = await holder
      expect(triesEnded).toBeLessThan(after.end)
      const tried = await run(first.tasks.tryExclusive("tried", Effect.sync(() => Date.now())))
      expect(tried._tag === "Some" && tried.value >= after.end).toBe(true)
      // concurrent tries in one process: one runs
      const concurrent = await Promise.all([0, 1, 2].map(() => run(first.tasks.tryExclusive("together", Effect.sleep(200)))))
      expect(concurrent.filter((one) => one._tag === "Some")).toHaveLength(1)
      // its failure passes on, and the lock is free again
      expect(await run(Effect.flip(first.tasks.tryExclusive("tried", Effect.fail("no luck" as const))))).toBe("no luck")
      expect((await run(second.tasks.tryExclusive("tried", Effect.void)))._tag).toBe("Some")
    })
  })

  describe("claim", () => {
    it("is true at most once per interval for a key, across instances; another key is claimed on its own; an elapsed interval claims again", async () => {
      const claims = await Promise.all([first, second, first, second].map(({ tasks }) => run(tasks.claim("claimed", 1))))
      expect(claims.filter(Boolean)).toHaveLength(1)
      expect(await run(second.tasks.claim("claimed", 1))).toBe(false)
      expect(await run(first.tasks.claim("other", 1))).toBe(true)
      await sleep(1100)
      expect(await run(second.tasks.claim("claimed", 1))).toBe(true)
      expect(await run(first.tasks.claim("claimed", 600))).toBe(false)
      // an interval of 0 claims every time
      expect([await run(first.tasks.claim("always", 0)), await run(second.tasks.claim("always", 0))]).toEqual([true, true])
    })
  })

  describe("configuration", () => {
    it("fails every operation with a 503 naming GATEWAY_RELATIONAL_DB_URL when it is not set", async () => {
      const tasks = await run(Effect.provide(Effect.gen(function*() {
        return yield* Tasks
      }), TasksLive({})))
      expect(tasks.available).toBe(false)
      const failures = await Promise.all([
        run(Effect.flip(tasks.enqueue("any", {}))),
        run(Effect.flip(tasks.register("any", () => Effect.void))),
        run(Effect.flip(tasks.get("0191f0c0-0000-7000-8000-000000000000"))),
        run(Effect.flip(tasks.cancel("0191f0c0-0000-7000-8000-000000000000"))),
        run(Effect.flip(tasks.schedule("any", 60, {}))),
        run(Effect.flip(tasks.exclusive("any", Effect.void))),
        run(Effect.flip(tasks.tryExclusive("any", Effect.void))),
        run(Effect.flip(tasks.claim("any", 60)))
      ])
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(ServiceUnavailable)
        expect((failure as ServiceUnavailable).status).toBe(503)
        expect(failure.message).toContain("GATEWAY_RELATIONAL_DB_URL")
      }
    })

    it("is available through TasksLive when GATEWAY_RELATIONAL_DB_URL is set", async () => {
      const answer = await run(Effect.scoped(Effect.gen(function*() {
        const tasks = yield* Tasks
        const id = yield* tasks.enqueue("idle-layer", { via: "layer" })
        return { available: tasks.available, info: yield* first.tasks.get(id!) }
      }).pipe(Effect.provide(Layer.fresh(TasksLive({ GATEWAY_RELATIONAL_DB_URL: database.url }, quickTasks))))))
      expect(answer).toMatchObject({ available: true, info: { state: "queued", kind: "idle-layer", payload: { via: "layer" } } })
    })

    it("does not start when the database cannot be reached: a StartupError naming GATEWAY_RELATIONAL_DB_URL", async () => {
      const port = await new Promise<number>((resolve) => {
        const server = net.createServer().listen(0, "127.0.0.1", () => {
          const { port } = server.address() as net.AddressInfo
          server.close(() => resolve(port))
        })
      })
      const started = Date.now()
      const error = await openTasks(`postgres://postgres@127.0.0.1:${port}/nowhere`).then(() => undefined, (error: unknown) => error)
      expect(error).toBeInstanceOf(StartupError)
      expect((error as StartupError).message).toMatch(/^GATEWAY_RELATIONAL_DB_URL: background tasks could not start: .*ECONNREFUSED/)
      expect(Date.now() - started).toBeLessThan(5000)
      const notPostgres = await openTasks("mysql://localhost/db").then(() => undefined, (error: unknown) => error)
      expect((notPostgres as StartupError).message).toBe("GATEWAY_RELATIONAL_DB_URL must be a postgres:// URL")
    })
  })
})
