/**
 * The pure parts of workflow evaluation runs: the mark run episode ids carry (so that ordinary
 * inferences are never looked up), and what a run does to an inference of its episode
 * (variant pinning, tags).
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { InferenceRequest } from "../../src/api/inference.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import { isUuidV7 } from "../../src/inference/prepare.ts"
import { mayBeRunEpisodeId, mintRunEpisodeId, runEpisodeMarker } from "../../src/workflowEvaluations/episodeIds.ts"
import { applyRun as applyRunResult, type RunEpisode, workflowEvaluationRunIdTag } from "../../src/workflowEvaluations/pinning.ts"

/** the request as the run applies it, or the refusal */
const applyRun = (request: InferenceRequest, found: RunEpisode) => Result.merge(applyRunResult(request, found))

describe("run episode ids", () => {
  it("are UUIDv7s of the time given, in time order, carrying the mark", () => {
    const now = Date.now()
    const ids = Array.from({ length: 1000 }, (_, i) => mintRunEpisodeId(now + Math.floor(i / 10)))
    for (const id of ids) {
      expect(isUuidV7(id), id).toBe(true)
      expect(id.endsWith(runEpisodeMarker)).toBe(true)
      expect(mayBeRunEpisodeId(id)).toBe(true)
      expect(mayBeRunEpisodeId(id.toUpperCase())).toBe(true)
    }
    expect(uuidv7Timestamp(ids[0])).toBe(now)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("are told apart from ids without the mark by their last four digits alone", () => {
    const id = mintRunEpisodeId(Date.now())
    expect(mayBeRunEpisodeId(`${id.slice(0, 32)}7016`)).toBe(false)
    expect(mayBeRunEpisodeId(`${id.slice(0, 35)}`)).toBe(false)
    expect(mayBeRunEpisodeId(`${id}0`)).toBe(false)
    expect(mayBeRunEpisodeId("")).toBe(false)
    // a client's id that happens to carry it is looked up (and found to be no run's)
    expect(mayBeRunEpisodeId(`${"x".repeat(32)}${runEpisodeMarker}`)).toBe(true)
  })

  it("leave ordinary ids unmarked but for about one in 65,536", () => {
    const marked = Array.from({ length: 100_000 }, () => uuidv7(Date.now())).filter(mayBeRunEpisodeId)
    // 1.5 expected; 12 or more has a probability under 1e-6
    expect(marked.length).toBeLessThan(12)
  })
})

const runEpisode = (variants: Record<string, string>): RunEpisode => ({
  run: {
    id: uuidv7(Date.now()),
    variants,
    projectName: "project",
    tags: { team: "run", shared: "run", level: "run" },
    timestamp: Date.now()
  },
  episode: {
    id: mintRunEpisodeId(Date.now()),
    runId: "",
    taskName: "task",
    tags: { step: "episode", shared: "episode", level: "episode" },
    timestamp: Date.now()
  }
})

const request = (fields: Partial<InferenceRequest>): InferenceRequest => ({
  function_name: "chat",
  input: { messages: [{ role: "user", content: "hi" }] },
  ...fields
})

describe("applyRun", () => {
  const found = runEpisode({ chat: "pinned", other: "x" })

  it("runs the variant the run pins for the function", () => {
    expect(applyRun(request({}), found)).toMatchObject({ function_name: "chat", variant_name: "pinned" })
    expect(applyRun(request({ variant_name: "pinned" }), found)).toMatchObject({ variant_name: "pinned" })
  })

  it("refuses a request naming another variant with a 400 that names both", () => {
    const refused = applyRun(request({ variant_name: "mine" }), found)
    expect(refused).toBeInstanceOf(InvalidRequest)
    const message = (refused as InvalidRequest).message
    expect(message).toContain("variant_name")
    expect(message).toContain("\"mine\"")
    expect(message).toContain("\"pinned\"")
    expect(message).toContain(found.run.id)
  })

  it("leaves the variant alone for a function the run does not pin, and for a model", () => {
    expect((applyRun(request({ function_name: "unpinned" }), found) as InferenceRequest).variant_name).toBeUndefined()
    expect((applyRun(request({ function_name: "unpinned", variant_name: "v" }), found) as InferenceRequest).variant_name).toBe("v")
    expect((applyRun(request({ function_name: undefined, model_name: "dummy::hello" }), found) as InferenceRequest).variant_name).toBeUndefined()
    // a name that is only on the prototype of an object is not pinned
    expect((applyRun(request({ function_name: "constructor" }), found) as InferenceRequest).variant_name).toBeUndefined()
  })

  it("adds the run's tags, then the episode's, then the request's, and the run's id", () => {
    const applied = applyRun(request({ tags: { level: "request", mine: "1" } }), found) as InferenceRequest
    expect(applied.tags).toEqual({
      team: "run",
      step: "episode",
      shared: "episode",
      level: "request",
      mine: "1",
      [workflowEvaluationRunIdTag]: found.run.id
    })
    const model = applyRun(request({ function_name: undefined, model_name: "dummy::hello" }), found) as InferenceRequest
    expect(model.tags?.[workflowEvaluationRunIdTag]).toBe(found.run.id)
  })

  it("keeps every other field of the request", () => {
    const original = request({ stream: true, dryrun: true, params: { chat_completion: { temperature: 0.5 } }, episode_id: found.episode.id })
    const applied = applyRun(original, found) as InferenceRequest
    expect({ ...applied, tags: undefined, variant_name: undefined }).toEqual({ ...original, tags: undefined, variant_name: undefined })
    expect(original.tags).toBeUndefined()
  })
})
