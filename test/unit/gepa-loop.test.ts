/**
 * The GEPA loop (src/optimization/gepa/loop.ts) over fake ports: the task model "answers" a
 * datapoint right (`exact` 1) when the candidate's system template holds MAGIC or the
 * datapoint's key, and politely (`polite` 1) when it holds "please"; the analysis and mutation
 * models are plain functions. The tests read what the loop returns, what it asked the ports,
 * and the checkpoints it saved: which mutations are kept, validated or refused, when the
 * models' failures end the task, the hopeless initial evaluations, determinism and resumption
 * from any checkpoint, the train/validation split.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import type { StoredDatapoint } from "../../src/datasets/store.ts"
import type { Objective } from "../../src/optimization/gepa/frontier.ts"
import {
  type Analysis,
  type Candidate,
  type Evaluation,
  type GepaPorts,
  type GepaSettings,
  type GepaState,
  type GepaStep,
  initialState,
  maxModelFailuresInARow,
  resumableState,
  runGepa
} from "../../src/optimization/gepa/loop.ts"
import { SeededRandom } from "../../src/optimization/gepa/random.ts"
import type { TaskFailure } from "../../src/tasks/service.ts"

interface FakeInput {
  readonly key: string
  /** the `polite` evaluator gives no score on it */
  readonly unrated?: boolean
}

const datapoint = (n: number, unrated = false): StoredDatapoint => ({
  id: `d${String(n).padStart(2, "0")}`,
  datasetName: "examples",
  functionName: "write",
  functionType: "chat",
  input: { key: `k${n}`, unrated } satisfies FakeInput,
  output: [{ type: "text", text: `k${n}` }],
  tags: {},
  isCustom: false,
  updatedAt: 0
})

/** d00..d09 (keys k0..k9); d09 is not rated by `polite` */
const datapoints: ReadonlyArray<StoredDatapoint> = Array.from({ length: 10 }, (_, n) => datapoint(n, n === 9))
const byId: ReadonlyMap<string, StoredDatapoint> = new Map(datapoints.map((d) => [d.id, d]))
const ids = (list: ReadonlyArray<StoredDatapoint>) => list.map((d) => d.id)

/** training d00..d05, validation d06..d09 */
const train = datapoints.slice(0, 6)
const validation = datapoints.slice(6)
const validationIds = ids(validation)

const objectives: ReadonlyArray<Objective> = [
  { name: "exact", optimize: "max" },
  { name: "polite", optimize: "max" }
]

const settings = (changes: Partial<GepaSettings> = {}): GepaSettings => ({
  maxIterations: 1,
  batchSize: 3,
  variantPrefix: "opt",
  objectives,
  ...changes
})

const initialCandidate = (name: string, system: string): Candidate => ({ name, templates: { system }, iteration: 0, base: name })

const systemOf = (candidate: Candidate) => candidate.templates.system ?? ""
const inputOf = (d: StoredDatapoint) => d.input as FakeInput

/** the fake task model and evaluators */
const scoreOf = (candidate: Candidate, d: StoredDatapoint): Evaluation => {
  const system = systemOf(candidate)
  const { key, unrated } = inputOf(d)
  const right = system.includes("MAGIC") || system.split(/\s+/).includes(key)
  return {
    datapoint: d,
    output: right ? key : "?",
    scores: {
      exact: right ? 1 : 0,
      polite: unrated === true ? null : system.includes("please") ? 1 : 0
    },
    evaluatorErrors: {}
  }
}

/** what the mutate port answers */
type Mutation = { readonly templates: Readonly<Record<string, string>> } | { readonly problem: string; readonly modelFailed?: boolean }

interface FakeOptions {
  /** what the fake evaluate returns for one datapoint (default `scoreOf`) */
  readonly evaluateOne?: (candidate: Candidate, d: StoredDatapoint, iteration: number) => Evaluation
  readonly analyzeOne?: (candidate: Candidate, evaluation: Evaluation, iteration: number) => string | { readonly error: string }
  readonly mutation?: (parent: Candidate, analyses: ReadonlyArray<Analysis>, iteration: number) => Mutation
  readonly check?: (candidate: Candidate) => string | undefined
  /** the evaluate port dies (a crash) at this iteration */
  readonly crashAt?: number
}

interface Calls {
  readonly evaluations: Array<{ readonly candidate: string; readonly ids: ReadonlyArray<string>; readonly iteration: number }>
  readonly analyses: Array<{ readonly candidate: string; readonly datapoint: string; readonly iteration: number }>
  readonly mutations: Array<{ readonly parent: string; readonly analysed: ReadonlyArray<string>; readonly iteration: number }>
  readonly checks: Array<{ readonly candidate: Candidate; readonly ids: ReadonlyArray<string> }>
  readonly progress: Array<readonly [number, GepaStep]>
  /** each checkpoint, as the JSON it is stored as */
  readonly checkpoints: Array<GepaState>
}

const fakePorts = (options: FakeOptions = {}): { ports: GepaPorts; calls: Calls } => {
  const calls: Calls = { evaluations: [], analyses: [], mutations: [], checks: [], progress: [], checkpoints: [] }
  const evaluateOne = options.evaluateOne ?? ((candidate, d) => scoreOf(candidate, d))
  const ports: GepaPorts = {
    evaluate: (candidate, list, iteration) => {
      if (iteration === options.crashAt) return Effect.die(new Error("the gateway died"))
      calls.evaluations.push({ candidate: candidate.name, ids: ids(list), iteration })
      return Effect.succeed(list.map((d) => evaluateOne(candidate, d, iteration)))
    },
    analyze: (candidate, evaluation, iteration) => {
      calls.analyses.push({ candidate: candidate.name, datapoint: evaluation.datapoint.id, iteration })
      return Effect.succeed(options.analyzeOne?.(candidate, evaluation, iteration) ?? `scored ${JSON.stringify(evaluation.scores)}`)
    },
    mutate: (parent, analyses, iteration) => {
      calls.mutations.push({ parent: parent.name, analysed: analyses.map((analysis) => analysis.evaluation.datapoint.id), iteration })
      return Effect.succeed(options.mutation?.(parent, analyses, iteration) ?? { templates: { system: `${systemOf(parent)} MAGIC` } })
    },
    check: (candidate, list) => {
      calls.checks.push({ candidate, ids: ids(list) })
      return options.check?.(candidate)
    },
    progress: (iteration, step) => Effect.sync(() => void calls.progress.push([iteration, step])),
    checkpoint: (state) => Effect.sync(() => void calls.checkpoints.push(JSON.parse(JSON.stringify(state))))
  }
  return { ports, calls }
}

const separateState = (initial: ReadonlyArray<Candidate>, seed = 7) => initialState(seed, { train, validation }, initial)

const run = (state: GepaState, gepaSettings: GepaSettings, ports: GepaPorts) => Effect.runPromise(runGepa(state, byId, gepaSettings, ports))
const failure = (state: GepaState, gepaSettings: GepaSettings, ports: GepaPorts): Promise<TaskFailure> =>
  Effect.runPromise(Effect.flip(runGepa(state, byId, gepaSettings, ports)))

/** what `statistics` gives over scores that are all `value` on `count` datapoints */
const constant = (value: number, count: number) => ({ mean: value, stdev: count < 2 ? null : 0, count })

describe("runGepa: mutations", () => {
  it("keeps a mutation that improves, with its statistics per evaluator, and never returns the initial variant", async () => {
    const { ports, calls } = fakePorts()
    const result = await run(separateState([initialCandidate("base", "Answer.")]), settings(), ports)

    expect(result.variants).toEqual([{ name: "opt_1", templates: { system: "Answer. MAGIC" }, parent: "base", iteration: 1, base: "base" }])
    expect(result).toMatchObject({ iterations: 1, invalid: 0 })
    // d09 has no polite score: 3 of the 4 validation datapoints count
    expect(result.statistics).toEqual({
      base: { exact: constant(0, 4), polite: constant(0, 3) },
      opt_1: { exact: constant(1, 4), polite: constant(0, 3) }
    })

    const minibatch = calls.evaluations[1].ids
    expect(minibatch).toHaveLength(3)
    expect(minibatch.every((id) => ids(train).includes(id))).toBe(true)
    expect(calls.evaluations).toEqual([
      { candidate: "base", ids: validationIds, iteration: 0 },
      { candidate: "base", ids: minibatch, iteration: 1 },
      { candidate: "opt_1", ids: minibatch, iteration: 1 },
      { candidate: "opt_1", ids: validationIds, iteration: 1 }
    ])
    expect(calls.analyses.map((analysis) => analysis.datapoint)).toEqual(minibatch)
    expect(calls.mutations).toEqual([{ parent: "base", analysed: minibatch, iteration: 1 }])
    expect(calls.checks.map((check) => [check.candidate.name, check.ids])).toEqual([["opt_1", minibatch]])
    expect(calls.progress).toEqual([
      [0, "evaluating_initial"],
      [1, "sampling"],
      [1, "evaluating_minibatch"],
      [1, "analyzing"],
      [1, "mutating"],
      [1, "evaluating_minibatch"],
      [1, "evaluating_validation"]
    ])
    // after the initial evaluation, and after the iteration
    expect(calls.checkpoints.map((state) => [state.iteration, state.candidates.map((candidate) => candidate.name), Object.keys(state.scores)])).toEqual([
      [0, ["base"], ["base"]],
      [1, ["base", "opt_1"], ["base", "opt_1"]]
    ])
  })

  it("drops from the result a kept child that a later child dominates", async () => {
    const { ports, calls } = fakePorts({
      mutation: (parent, _, iteration) => ({ templates: { system: `${systemOf(parent)} ${iteration === 1 ? "MAGIC" : "please"}` } })
    })
    const result = await run(separateState([initialCandidate("base", "Answer.")]), settings({ maxIterations: 2 }), ports)
    // opt_1 dominates base, so it is the only frontier member and the parent of iteration 2
    expect(calls.mutations.map((mutation) => mutation.parent)).toEqual(["base", "opt_1"])
    expect(result.variants.map((variant) => [variant.name, variant.parent, variant.templates.system])).toEqual([["opt_2", "opt_1", "Answer. MAGIC please"]])
    expect(Object.keys(result.statistics)).toEqual(["base", "opt_1", "opt_2"])
    expect(result.statistics.opt_2).toEqual({ exact: constant(1, 4), polite: constant(1, 3) })
  })

  it("keeps a mutation that ties its parent, and still returns only the new variant", async () => {
    const { ports, calls } = fakePorts({ mutation: () => ({ templates: { system: "Answer again." } }) })
    const result = await run(separateState([initialCandidate("base", "Answer.")]), settings(), ports)
    expect(calls.evaluations.filter((call) => call.candidate === "opt_1").map((call) => call.ids)).toEqual([calls.evaluations[1].ids, validationIds])
    expect(result.variants.map((variant) => variant.name)).toEqual(["opt_1"])
    expect(Object.keys(result.statistics)).toEqual(["base", "opt_1"])
  })

  it("does not validate nor keep a mutation worse than its parent on the minibatch", async () => {
    const { ports, calls } = fakePorts({ mutation: () => ({ templates: { system: "Answer." } }) })
    const result = await run(separateState([initialCandidate("base", "MAGIC answer.")]), settings(), ports)
    const childCalls = calls.evaluations.filter((call) => call.candidate === "opt_1")
    expect(childCalls).toEqual([{ candidate: "opt_1", ids: calls.evaluations[1].ids, iteration: 1 }])
    expect(calls.progress).not.toContainEqual([1, "evaluating_validation"])
    expect(result).toEqual({ variants: [], statistics: { base: { exact: constant(1, 4), polite: constant(0, 3) } }, iterations: 1, invalid: 0 })
    expect(calls.checkpoints.at(-1)!.candidates.map((candidate) => candidate.name)).toEqual(["base"])
  })

  it("counts a mutation whose templates the check refuses as invalid, and never evaluates it", async () => {
    const { ports, calls } = fakePorts({
      mutation: () => ({ templates: { system: "{{ MAGIC" } }),
      check: (candidate) => (systemOf(candidate).includes("{{") ? "unclosed expression" : undefined)
    })
    const result = await run(separateState([initialCandidate("base", "Answer.")]), settings({ maxIterations: 2 }), ports)
    expect(calls.checks.map((check) => check.candidate.name)).toEqual(["opt_1", "opt_2"])
    expect(calls.evaluations.every((call) => call.candidate === "base")).toBe(true)
    expect(result).toMatchObject({ variants: [], iterations: 2, invalid: 2 })
    expect(calls.checkpoints.map((state) => [state.invalid, state.modelFailuresInARow])).toEqual([[0, 0], [1, 0], [2, 0]])
  })

  it("counts a mutation model's unusable answer as invalid, not as a model failure", async () => {
    const iterations = maxModelFailuresInARow + 2
    const { ports, calls } = fakePorts({
      mutation: (_, __, iteration) => (iteration % 2 === 0 ? { problem: "no templates in the answer", modelFailed: false } : { problem: "not JSON" })
    })
    const result = await run(separateState([initialCandidate("base", "Answer.")]), settings({ maxIterations: iterations }), ports)
    expect(result).toMatchObject({ variants: [], iterations, invalid: iterations })
    expect(calls.checks).toEqual([])
    expect(calls.checkpoints.every((state) => state.modelFailuresInARow === 0)).toBe(true)
  })
})

describe("runGepa: the models failing", () => {
  const start = () => separateState([initialCandidate("base", "Answer.")])

  it(`fails after the analysis model fails on every result ${maxModelFailuresInARow} iterations in a row`, async () => {
    const { ports, calls } = fakePorts({ analyzeOne: () => ({ error: "the analyst timed out" }) })
    const error = await failure(start(), settings({ maxIterations: 10 }), ports)
    expect(error.message).toContain("the analysis model failed: the analyst timed out")
    expect(error.message).toContain(`${maxModelFailuresInARow} iterations in a row`)
    expect(calls.mutations).toEqual([])
    // the initial evaluation and the failing iterations before the last are checkpointed
    expect(calls.checkpoints.map((state) => state.modelFailuresInARow)).toEqual(Array.from({ length: maxModelFailuresInARow }, (_, i) => i))
  })

  it("goes on when the analysis model fails on some results only, and mutates from the others", async () => {
    const { ports, calls } = fakePorts({
      analyzeOne: (_, evaluation) => (evaluation.datapoint.id === calls.evaluations[1].ids[0] ? { error: "refused" } : "fine")
    })
    const result = await run(start(), settings(), ports)
    expect(calls.mutations).toEqual([{ parent: "base", analysed: calls.evaluations[1].ids.slice(1), iteration: 1 }])
    expect(result.variants.map((variant) => variant.name)).toEqual(["opt_1"])
  })

  it(`fails after the mutation model fails ${maxModelFailuresInARow} iterations in a row`, async () => {
    const { ports, calls } = fakePorts({ mutation: () => ({ problem: "HTTP 500 from the mutator", modelFailed: true }) })
    const error = await failure(start(), settings({ maxIterations: 10 }), ports)
    expect(error.message).toContain("the mutation model failed: HTTP 500 from the mutator")
    expect(error.message).toContain(`${maxModelFailuresInARow} iterations in a row`)
    expect(calls.mutations).toHaveLength(maxModelFailuresInARow)
    expect(calls.checks).toEqual([])
  })

  it(`fails with the model's failure when it failed on every iteration of a run shorter than ${maxModelFailuresInARow} iterations`, async () => {
    const iterations = maxModelFailuresInARow - 1
    const { ports, calls } = fakePorts({ mutation: () => ({ problem: "HTTP 500 from the mutator", modelFailed: true }) })
    const error = await failure(start(), settings({ maxIterations: iterations }), ports)
    expect(error.message).toBe(`the mutation model failed: HTTP 500 from the mutator (on every one of the ${iterations} iterations)`)
    expect(calls.mutations).toHaveLength(iterations)
  })

  it("completes without variants when a model failed on some iterations only", async () => {
    // the first iteration's mutation model fails, the second's answers unusable templates
    const { ports } = fakePorts({
      mutation: (_, __, iteration) => (iteration === 1 ? { problem: "HTTP 500 from the mutator", modelFailed: true } : { problem: "not JSON" })
    })
    const result = await run(start(), settings({ maxIterations: 2 }), ports)
    expect(result).toMatchObject({ variants: [], iterations: 2, invalid: 1 })
  })

  it("counts the two models' failures together, naming the last", async () => {
    // the analysis model fails in odd iterations, the mutation model in even ones
    const { ports } = fakePorts({
      analyzeOne: (_, __, iteration) => (iteration % 2 === 1 ? { error: "analyst down" } : "fine"),
      mutation: () => ({ problem: "mutator down", modelFailed: true })
    })
    const error = await failure(start(), settings({ maxIterations: 10 }), ports)
    expect(error.message).toContain(maxModelFailuresInARow % 2 === 1 ? "the analysis model failed: analyst down" : "the mutation model failed: mutator down")
  })

  it("starts the count again after an iteration whose models answer", async () => {
    // every iteration fails but each maxModelFailuresInARow-th; the analysis model fails in odd iterations, the mutation model in the others
    const failing = (iteration: number) => iteration % maxModelFailuresInARow !== 0
    const { ports, calls } = fakePorts({
      analyzeOne: (_, __, iteration) => (failing(iteration) && iteration % 2 === 1 ? { error: "analyst down" } : "fine"),
      mutation: (parent, _, iteration) => (failing(iteration) ? { problem: "mutator down", modelFailed: true } : { templates: { system: `${systemOf(parent)} w${iteration}` } })
    })
    const iterations = 3 * maxModelFailuresInARow
    const result = await run(start(), settings({ maxIterations: iterations }), ports)
    expect(result.iterations).toBe(iterations)
    expect(calls.checkpoints.map((state) => state.modelFailuresInARow)).toEqual(Array.from({ length: iterations + 1 }, (_, i) => i % maxModelFailuresInARow))
  })
})

describe("runGepa: a hopeless start", () => {
  it("fails when every inference of the initial variants fails", async () => {
    const { ports, calls } = fakePorts({
      evaluateOne: (candidate, d) => ({ datapoint: d, error: `${candidate.name}: no route`, scores: { exact: null, polite: null }, evaluatorErrors: {} })
    })
    const error = await failure(separateState([initialCandidate("a", "A"), initialCandidate("b", "B")]), settings(), ports)
    expect(error.message).toBe("every inference of the initial variants failed, e.g.: a: no route")
    expect(calls.evaluations.map((call) => [call.candidate, call.iteration])).toEqual([["a", 0], ["b", 0]])
    expect(calls.checkpoints).toEqual([])
  })

  it("goes on when one initial variant answers though the other fails everywhere", async () => {
    const { ports } = fakePorts({
      evaluateOne: (candidate, d): Evaluation =>
        candidate.name === "b" ? { datapoint: d, error: "no route", scores: { exact: null, polite: null }, evaluatorErrors: {} } : scoreOf(candidate, d)
    })
    const result = await run(separateState([initialCandidate("a", "A"), initialCandidate("b", "B")]), settings(), ports)
    expect(result.statistics.b).toEqual({ exact: { mean: null, stdev: null, count: 0 }, polite: { mean: null, stdev: null, count: 0 } })
    expect(result.iterations).toBe(1)
  })

  it("fails when an evaluator errs on every datapoint answered", async () => {
    const { ports, calls } = fakePorts({
      evaluateOne: (candidate, d): Evaluation => {
        // one inference fails; the judge errs on all the others
        if (d.id === validationIds[0]) return { datapoint: d, error: "no route", scores: { exact: null, polite: null }, evaluatorErrors: {} }
        const evaluation = scoreOf(candidate, d)
        return { ...evaluation, scores: { ...evaluation.scores, polite: null }, evaluatorErrors: { polite: "judge: invalid JSON" } }
      }
    })
    const error = await failure(separateState([initialCandidate("base", "Answer.")]), settings(), ports)
    expect(error.message).toBe(`evaluator "polite" failed on every datapoint, e.g.: judge: invalid JSON`)
    expect(calls.checkpoints).toEqual([])
  })

  it("goes on when an evaluator errs on some datapoints only", async () => {
    const { ports } = fakePorts({
      evaluateOne: (candidate, d) => (d.id === validationIds[0] ? { ...scoreOf(candidate, d), evaluatorErrors: { exact: "odd output" } } : scoreOf(candidate, d))
    })
    expect((await run(separateState([initialCandidate("base", "Answer.")]), settings(), ports)).iterations).toBe(1)
  })

  it("fails when the datapoints of the state are gone", async () => {
    const { ports } = fakePorts()
    const state = { ...separateState([initialCandidate("base", "Answer.")]), validationIds: ["gone"] }
    expect((await failure(state, settings(), ports)).message).toContain("holds no datapoint")
  })
})

describe("runGepa: determinism and resumption", () => {
  /**
   * Two initial variants knowing a few keys each; a mutation adds the keys its parent missed on
   * the minibatch (an improvement), forgets its parent's first key (worse, or a tie) every third
   * iteration, and writes broken templates every fourth.
   */
  const richOptions: FakeOptions = {
    mutation: (parent, analyses, iteration) => {
      const words = systemOf(parent).split(" ")
      if (iteration % 4 === 0) return { templates: { system: `{{ ${words.join(" ")}` } }
      if (iteration % 3 === 0) return { templates: { system: words.slice(1).join(" ") || "nothing" } }
      const missed = analyses.filter((analysis) => analysis.evaluation.scores.exact === 0).map((analysis) => inputOf(analysis.evaluation.datapoint).key)
      return { templates: { system: [...words, ...missed].join(" ") } }
    },
    check: (candidate) => (systemOf(candidate).startsWith("{{") ? "unclosed expression" : undefined)
  }
  const rich = (options: Partial<FakeOptions> = {}) => fakePorts({ ...richOptions, ...options })
  const richSettings = settings({ maxIterations: 9, batchSize: 2 })
  const richStart = () => initialState(2024, { split: datapoints }, [initialCandidate("a", "k0 k1 k2"), initialCandidate("b", "k5 k6 please")])

  const perIteration = (calls: Calls) => {
    const counts = new Map<number, number>()
    for (const call of calls.evaluations) counts.set(call.iteration, (counts.get(call.iteration) ?? 0) + 1)
    return counts
  }

  it("gives the same result, asking the same, from the same state", async () => {
    const first = rich()
    const second = rich()
    const one = await run(richStart(), richSettings, first.ports)
    const two = await run(richStart(), richSettings, second.ports)
    expect(two).toEqual(one)
    expect(second.calls).toEqual(first.calls)
    // the scenario exercises kept, rejected and invalid mutations
    expect(one.variants.length).toBeGreaterThan(0)
    expect(one.invalid).toBeGreaterThan(0)
    // some valid mutation was not validated: fewer candidates scored than the initial ones and the valid mutations
    expect(Object.keys(one.statistics).length).toBeLessThan(2 + richSettings.maxIterations - one.invalid)
  })

  it("draws another minibatch in each iteration: the generator goes on from iteration to iteration", async () => {
    const { ports, calls } = rich()
    await run(richStart(), richSettings, ports)
    // the parent's evaluation opens each iteration
    const minibatches = Array.from({ length: richSettings.maxIterations }, (_, i) =>
      JSON.stringify(calls.evaluations.find((call) => call.iteration === i + 1)!.ids))
    expect(new Set(minibatches).size).toBeGreaterThan(1)
  })

  for (const k of Array.from({ length: richSettings.maxIterations }, (_, i) => i)) {
    it(`resumed from the checkpoint after iteration ${k}, ends as a run never stopped and redoes nothing`, async () => {
      const whole = rich()
      const expected = await run(richStart(), richSettings, whole.ports)

      // a run that dies during iteration k + 1
      const crashed = rich({ crashAt: k + 1 })
      const exit = await Effect.runPromiseExit(runGepa(richStart(), byId, richSettings, crashed.ports))
      expect(Exit.isFailure(exit)).toBe(true)
      const last = crashed.calls.checkpoints.at(-1)!
      expect(last.iteration).toBe(k)
      expect(last).toEqual(whole.calls.checkpoints[k])

      const resumedState = resumableState(JSON.parse(JSON.stringify(last)))
      expect(resumedState).toBeDefined()
      const resumed = rich()
      const result = await run(resumedState!, richSettings, resumed.ports)
      expect(result).toEqual(expected)
      expect(resumed.calls.evaluations.every((call) => call.iteration > k)).toBe(true)
      const counts = perIteration(resumed.calls)
      for (const [iteration, count] of perIteration(whole.calls)) expect(counts.get(iteration) ?? 0).toBe(iteration > k ? count : 0)
      expect(resumed.calls.checkpoints).toEqual(whole.calls.checkpoints.slice(k + 1))
    })
  }

  it("does nothing more from the last checkpoint but give the result", async () => {
    const whole = rich()
    const expected = await run(richStart(), richSettings, whole.ports)
    const again = rich()
    expect(await run(whole.calls.checkpoints.at(-1)!, richSettings, again.ports)).toEqual(expected)
    expect(again.calls.evaluations).toEqual([])
    expect(again.calls.checkpoints).toEqual([])
  })
})

describe("initialState", () => {
  const initial = [initialCandidate("base", "Answer.")]
  const splitOf = (seed: number, list: ReadonlyArray<StoredDatapoint> = datapoints) => {
    const state = initialState(seed, { split: list }, initial)
    return { train: state.trainIds, validation: state.validationIds }
  }

  it("splits one dataset by the seed: the same seed the same split, whatever the order of the datapoints", () => {
    expect(splitOf(42)).toEqual(splitOf(42))
    expect(splitOf(42, [...datapoints].reverse())).toEqual(splitOf(42))
  })

  it("splits into halves that cover the dataset, validation taking the odd one", () => {
    for (const list of [datapoints, datapoints.slice(0, 7)]) {
      const { train: trainIds, validation: validationIdsOf } = splitOf(3, list)
      expect(trainIds).toHaveLength(Math.floor(list.length / 2))
      expect(validationIdsOf).toHaveLength(Math.ceil(list.length / 2))
      expect([...trainIds, ...validationIdsOf].sort()).toEqual(ids(list))
    }
  })

  it("splits differently with other seeds", () => {
    const splits = new Set(Array.from({ length: 10 }, (_, seed) => JSON.stringify(splitOf(seed))))
    expect(splits.size).toBeGreaterThan(1)
    expect(Array.from({ length: 10 }, (_, seed) => seed + 1).some((seed) => JSON.stringify(splitOf(seed)) !== JSON.stringify(splitOf(42)))).toBe(true)
  })

  it("takes training and validation sets as given, their ids sorted, with the generator seeded and nothing done", () => {
    const state = initialState(5, { train: [datapoints[3], datapoints[1]], validation: [datapoints[8], datapoints[0], datapoints[4]] }, initial)
    expect(state).toEqual({
      version: 1,
      trainIds: ["d01", "d03"],
      validationIds: ["d00", "d04", "d08"],
      random: SeededRandom.fromSeed(5).state,
      candidates: initial,
      scores: {},
      iteration: 0,
      invalid: 0,
      modelFailuresInARow: 0
    })
  })

  it("keeps the generator's state after the split, so a run from it continues the draws", () => {
    const random = SeededRandom.fromSeed(42)
    const state = initialState(42, { split: datapoints }, initial)
    expect(state.random).not.toBe(random.state)
  })
})

describe("resumableState", () => {
  it("accepts a version 1 checkpoint, as read back from JSON", () => {
    const state = separateState([initialCandidate("base", "Answer.")])
    const read = JSON.parse(JSON.stringify(state))
    expect(resumableState(read)).toBe(read)
    expect(resumableState(read)).toEqual(state)
  })

  it("refuses anything else", () => {
    for (const value of [undefined, null, 1, "x", [], {}, { version: 2 }, { version: "1" }, { version: 0 }]) expect(resumableState(value)).toBeUndefined()
  })
})
