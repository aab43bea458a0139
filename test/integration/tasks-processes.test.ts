/**
 * Durable tasks shared by several gateway processes (test/support/taskProcess.ts, each running
 * the Tasks layer on one database and recording every run in `task_runs`): every task runs
 * exactly once and never twice at the same time, and a task whose process is killed while it
 * runs completes on another process once its heartbeat (10 s) has lapsed.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { migrateDatabase, type OpenTasks, openTasks, run, untilState, waitFor } from "../support/tasks.ts"

const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url))
const script = fileURLToPath(new URL("../support/taskProcess.ts", import.meta.url))

interface TaskRun {
  readonly task_id: string
  readonly pid: number
  readonly started_at: string
  readonly ended_at: string | null
}

let database: TestDatabase
let client: OpenTasks
const children: Array<ChildProcess> = []

/** a task process on the test database, once it registered its kind */
const startProcess = (): Promise<ChildProcess> => {
  const child = spawn(node, [script, database.url], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let output = ""
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`task process not ready:\n${output}`)), 20_000)
    const read = (data: Buffer) => {
      output += data
      if (/^ready$/m.test(output)) {
        clearTimeout(timer)
        resolve(child)
      }
    }
    child.stdout!.on("data", read)
    child.stderr!.on("data", read)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`task process exited with ${code}:\n${output}`))
    })
  })
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

const runsOf = (taskIds: ReadonlyArray<string>) =>
  queryDatabase(database, `SELECT task_id, pid, started_at, ended_at FROM task_runs
    WHERE task_id IN (${taskIds.map((id) => `'${id}'`).join(", ")}) ORDER BY task_id, started_at`) as Promise<Array<TaskRun>>

beforeAll(async () => {
  database = await freshDatabase("postgres")
  await migrateDatabase(database.url)
  await promisify(execFile)("psql", [database.url, "-v", "ON_ERROR_STOP=1", "-qc",
    "CREATE TABLE task_runs (id serial PRIMARY KEY, task_id uuid NOT NULL, pid integer NOT NULL, started_at timestamptz NOT NULL, ended_at timestamptz)"])
  client = await openTasks(database.url)
})

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  await Promise.all(children.map(exited))
  await client?.close()
  await database?.drop()
})

describe("tasks shared by several processes", () => {
  it("runs each of 20 tasks exactly once between two processes, never two runs of one task at a time", async () => {
    const [first, second] = await Promise.all([startProcess(), startProcess()])
    const ids = await Promise.all(Array.from({ length: 20 }, () => run(client.tasks.enqueue("sleep", { ms: 500 }))))
    expect(new Set(ids).size).toBe(20)
    const taskIds = ids.map((id) => id!)

    await waitFor(async () => {
      const infos = await Promise.all(taskIds.map((id) => run(client.tasks.get(id))))
      return infos.filter((info) => info?.state === "completed").length
    }, (completed) => completed === 20, 20_000)

    const runs = await runsOf(taskIds)
    const perTask = new Map<string, Array<TaskRun>>()
    for (const taskRun of runs) perTask.set(taskRun.task_id, [...(perTask.get(taskRun.task_id) ?? []), taskRun])
    expect([...perTask.keys()].sort()).toEqual([...taskIds].sort())
    expect([...perTask.values()].map((taskRuns) => taskRuns.length)).toEqual(Array(20).fill(1))
    expect(runs.every((taskRun) => taskRun.ended_at !== null)).toBe(true)
    // both processes took part: 20 runs of 500 ms are more than one process's 4 at a time take in the polling interval
    expect(new Set(runs.map((taskRun) => taskRun.pid))).toEqual(new Set([first.pid, second.pid]))
    // what the handler answered is the task's result
    const info = await run(client.tasks.get(taskIds[0]))
    expect(info?.result).toEqual({ pid: perTask.get(taskIds[0])![0].pid })
  }, 40_000)

  it("completes a task on another process when the one running it is killed, once its heartbeat lapsed", async () => {
    // the processes of the test above are still running; one more makes sure two survive the kill
    const third = await startProcess()
    const living = children.filter((child) => child.exitCode === null && child.signalCode === null)
    expect(living).toContain(third)
    const id = (await run(client.tasks.enqueue("sleep", { ms: 3000 })))!

    const [started] = await waitFor(() => runsOf([id]), (runs) => runs.length === 1, 10_000)
    const runner = living.find((child) => child.pid === started.pid)!
    expect(runner).toBeDefined()
    runner.kill("SIGKILL")
    await exited(runner)
    const killedAt = Date.now()
    expect((await run(client.tasks.get(id)))?.state).toBe("running")

    const done = await untilState(client.tasks, id, "completed", 30_000)
    // abandoned after 10 s without a heartbeat, found within the supervision interval, retried after 1-2 s, then 3 s of work
    expect(Date.now() - killedAt).toBeLessThan(25_000)
    const runs = await runsOf([id])
    expect(runs).toHaveLength(2)
    expect(runs[0]).toMatchObject({ pid: runner.pid, ended_at: null })
    expect(runs[1].pid).not.toBe(runner.pid)
    expect(living.map((child) => child.pid)).toContain(runs[1].pid)
    expect(runs[1].ended_at).not.toBeNull()
    expect(Date.parse(runs[1].started_at)).toBeGreaterThanOrEqual(Date.parse(runs[0].started_at) + 10_000)
    expect(done.result).toEqual({ pid: runs[1].pid })
  }, 45_000)
})
