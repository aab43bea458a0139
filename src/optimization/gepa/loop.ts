/**
 * The GEPA loop (Agrawal et al. 2025, "GEPA: Reflective Prompt Evolution Can Outperform
 * Reinforcement Learning"), over ports that run and score candidates and call the analysis and
 * mutation models (`service.ts` implements them on the inference use case):
 *
 * 1. the initial variants are scored on the validation set; their per-datapoint scores seed the
 *    instance-wise Pareto frontier (`frontier.ts`);
 * 2. each iteration draws a parent from the frontier (by how many datapoints it is best on) and
 *    `batch_size` training datapoints, runs and scores the parent on them, has the analysis
 *    model explain each result, has the mutation model rewrite the parent's templates from the
 *    analyses, checks the new templates (they compile and render the minibatch's inputs), scores
 *    the child on the same minibatch and, when it is not worse than its parent there, on the
 *    validation set, where it joins the candidates (a dominated candidate leaves the frontier);
 * 3. after `max_iterations`, the new variants on the frontier are the result; a run whose every
 *    iteration failed for a model (fewer than the three in a row that stop it earlier) ends in
 *    that failure rather than with no variant.
 *
 * The state is checkpointed after the initial evaluation and after every iteration, with the
 * random generator's state, so a run that resumes from a checkpoint goes on as the crashed one
 * would have.
 */
import * as Effect from "effect/Effect"
import type { StoredDatapoint } from "../../datasets/store.ts"
import type { TaskFailure } from "../../tasks/service.ts"
import type { GepaCandidate } from "./candidates.ts"
import { chooseParent, type DatapointScores, type EvaluatorStatistics, notWorse, type Objective, paretoFrontier, type ScoreTable, statistics } from "./frontier.ts"
import { sample, SeededRandom, splitHalves } from "./random.ts"

/** a set of templates GEPA tried (an initial variant's, iteration 0, named as the variant; or a child's), with the configured variant it descends from (its model and parameters) */
export interface Candidate extends GepaCandidate {
  readonly base: string
}

/** one datapoint run and scored */
export interface Evaluation {
  readonly datapoint: StoredDatapoint
  readonly output?: unknown
  /** the inference failed */
  readonly error?: string | undefined
  readonly scores: DatapointScores
  readonly evaluatorErrors: Readonly<Record<string, string>>
}

export interface Analysis {
  readonly evaluation: Evaluation
  readonly analysis: string
}

export type GepaStep =
  | "loading"
  | "evaluating_initial"
  | "sampling"
  | "analyzing"
  | "mutating"
  | "evaluating_minibatch"
  | "evaluating_validation"

/** What the loop does outside itself. */
export interface GepaPorts {
  readonly evaluate: (candidate: Candidate, datapoints: ReadonlyArray<StoredDatapoint>, iteration: number) => Effect.Effect<ReadonlyArray<Evaluation>>
  /** the analysis of one result, or why the model gave none */
  readonly analyze: (candidate: Candidate, evaluation: Evaluation, iteration: number) => Effect.Effect<string | { readonly error: string }>
  /** new templates for `parent`, or why there are none (`modelFailed`: the model failed, rather than answered unusable templates) */
  readonly mutate: (
    parent: Candidate,
    analyses: ReadonlyArray<Analysis>,
    iteration: number
  ) => Effect.Effect<{ readonly templates: Readonly<Record<string, string>> } | { readonly problem: string; readonly modelFailed?: boolean }>
  /** why `candidate`'s templates cannot be used with these inputs, or undefined */
  readonly check: (candidate: Candidate, datapoints: ReadonlyArray<StoredDatapoint>) => string | undefined
  readonly progress: (iteration: number, step: GepaStep) => Effect.Effect<void>
  readonly checkpoint: (state: GepaState) => Effect.Effect<void>
}

export interface GepaSettings {
  readonly maxIterations: number
  readonly batchSize: number
  readonly variantPrefix: string
  readonly objectives: ReadonlyArray<Objective>
}

/** What a checkpoint holds (JSON). */
export interface GepaState {
  readonly version: 1
  readonly trainIds: ReadonlyArray<string>
  readonly validationIds: ReadonlyArray<string>
  /** the random generator's state */
  readonly random: number
  readonly candidates: ReadonlyArray<Candidate>
  /** candidate name -> its validation scores */
  readonly scores: Readonly<Record<string, ScoreTable>>
  /** iterations completed */
  readonly iteration: number
  /** mutations refused: unusable templates */
  readonly invalid: number
  /** iterations in a row whose analysis or mutation model failed */
  readonly modelFailuresInARow: number
  /** how the last of them failed (absent from checkpoints of earlier versions) */
  readonly lastModelFailure?: string | undefined
}

export interface GepaResult {
  /** the new candidates on the frontier */
  readonly variants: ReadonlyArray<Candidate>
  /** per candidate scored on the validation set, per evaluator */
  readonly statistics: Readonly<Record<string, Readonly<Record<string, EvaluatorStatistics>>>>
  readonly iterations: number
  readonly invalid: number
}

/** iterations in a row whose models fail before the task gives up */
export const maxModelFailuresInARow = 3

const fail = (message: string) => Effect.fail<TaskFailure>({ message })

/** a checkpoint this loop can go on from, or undefined (another version, or none) */
export const resumableState = (value: unknown): GepaState | undefined =>
  typeof value === "object" && value !== null && (value as { version?: unknown }).version === 1 ? (value as GepaState) : undefined

/** the datapoints split (one dataset) or given apart, with the generator seeded */
export const initialState = (
  seed: number,
  datasets: { readonly split: ReadonlyArray<StoredDatapoint> } | { readonly train: ReadonlyArray<StoredDatapoint>; readonly validation: ReadonlyArray<StoredDatapoint> },
  initial: ReadonlyArray<Candidate>
): GepaState => {
  const random = SeededRandom.fromSeed(seed)
  const ids = (datapoints: ReadonlyArray<StoredDatapoint>) => datapoints.map((datapoint) => datapoint.id).sort()
  const { train, validation } = "split" in datasets
    ? splitHalves(ids(datasets.split), random)
    : { train: ids(datasets.train), validation: ids(datasets.validation) }
  return { version: 1, trainIds: train, validationIds: validation, random: random.state, candidates: initial, scores: {}, iteration: 0, invalid: 0, modelFailuresInARow: 0 }
}

const tableOf = (evaluations: ReadonlyArray<Evaluation>): ScoreTable =>
  Object.fromEntries(evaluations.map((evaluation) => [evaluation.datapoint.id, evaluation.scores]))

/** why the initial evaluation cannot seed anything: every inference failed, or an evaluator failed on every datapoint */
const hopeless = (evaluations: ReadonlyArray<Evaluation>, objectives: ReadonlyArray<Objective>): string | undefined => {
  const failed = evaluations.filter((evaluation) => evaluation.error !== undefined)
  if (failed.length === evaluations.length && failed.length > 0) {
    return `every inference of the initial variants failed, e.g.: ${failed[0].error}`
  }
  const answered = evaluations.filter((evaluation) => evaluation.error === undefined)
  for (const { name } of objectives) {
    const errors = answered.map((evaluation) => evaluation.evaluatorErrors[name]).filter((error) => error !== undefined)
    if (answered.length > 0 && errors.length === answered.length) return `evaluator "${name}" failed on every datapoint, e.g.: ${errors[0]}`
  }
  return undefined
}

/** Runs GEPA from `state` (fresh or resumed) to its result. */
export const runGepa = (
  start: GepaState,
  datapoints: ReadonlyMap<string, StoredDatapoint>,
  settings: GepaSettings,
  ports: GepaPorts
): Effect.Effect<GepaResult, TaskFailure> =>
  Effect.gen(function*() {
    let state = start
    const pick = (ids: ReadonlyArray<string>) => ids.flatMap((id) => datapoints.get(id) ?? [])
    const validation = pick(state.validationIds)
    const train = pick(state.trainIds)
    if (validation.length === 0 || train.length === 0) return yield* fail("the training or the validation set holds no datapoint (any more)")
    const scoredIds = validation.map((datapoint) => datapoint.id)

    if (Object.keys(state.scores).length === 0) {
      yield* ports.progress(0, "evaluating_initial")
      const all: Array<Evaluation> = []
      const scores: Record<string, ScoreTable> = {}
      for (const candidate of state.candidates) {
        const evaluations = yield* ports.evaluate(candidate, validation, 0)
        all.push(...evaluations)
        scores[candidate.name] = tableOf(evaluations)
      }
      const problem = hopeless(all, settings.objectives)
      if (problem !== undefined) return yield* fail(problem)
      state = { ...state, scores }
      yield* ports.checkpoint(state)
    }

    while (state.iteration < settings.maxIterations) {
      const iteration = state.iteration + 1
      const random = new SeededRandom(state.random)
      yield* ports.progress(iteration, "sampling")
      const byName = new Map(state.candidates.map((candidate) => [candidate.name, candidate]))
      const scored = new Map(Object.entries(state.scores))
      const parent = byName.get(chooseParent(paretoFrontier(scored, scoredIds, settings.objectives), random))!
      const minibatch = sample(train, settings.batchSize, random)
      const minibatchIds = minibatch.map((datapoint) => datapoint.id)

      yield* ports.progress(iteration, "evaluating_minibatch")
      const parentResults = yield* ports.evaluate(parent, minibatch, iteration)
      yield* ports.progress(iteration, "analyzing")
      const answers = yield* Effect.forEach(parentResults, (evaluation) => ports.analyze(parent, evaluation, iteration), { concurrency: "unbounded" })
      const analyses: Array<Analysis> = []
      let analysisError: string | undefined
      answers.forEach((answer, index) => {
        if (typeof answer === "string") analyses.push({ evaluation: parentResults[index], analysis: answer })
        else analysisError ??= answer.error
      })

      let modelFailure: string | undefined = analyses.length === 0 ? `the analysis model failed: ${analysisError ?? "no analysis"}` : undefined
      let invalid = 0
      let child: Candidate | undefined
      let childScores: ScoreTable | undefined
      if (modelFailure === undefined) {
        yield* ports.progress(iteration, "mutating")
        const mutation = yield* ports.mutate(parent, analyses, iteration)
        if ("problem" in mutation) {
          if (mutation.modelFailed === true) modelFailure = `the mutation model failed: ${mutation.problem}`
          else invalid++
        } else {
          const candidate: Candidate = {
            name: `${settings.variantPrefix}_${iteration}`,
            templates: mutation.templates,
            parent: parent.name,
            iteration,
            base: parent.base
          }
          if (ports.check(candidate, minibatch) !== undefined) invalid++
          else {
            yield* ports.progress(iteration, "evaluating_minibatch")
            const tried = tableOf(yield* ports.evaluate(candidate, minibatch, iteration))
            if (notWorse(tried, tableOf(parentResults), minibatchIds, settings.objectives)) {
              yield* ports.progress(iteration, "evaluating_validation")
              child = candidate
              childScores = tableOf(yield* ports.evaluate(candidate, validation, iteration))
            }
          }
        }
      }

      const failures = modelFailure === undefined ? 0 : state.modelFailuresInARow + 1
      if (failures >= maxModelFailuresInARow) return yield* fail(`${modelFailure} (${failures} iterations in a row)`)
      state = {
        ...state,
        iteration,
        random: random.state,
        candidates: child === undefined ? state.candidates : [...state.candidates, child],
        scores: child === undefined ? state.scores : { ...state.scores, [child.name]: childScores! },
        invalid: state.invalid + invalid,
        modelFailuresInARow: failures,
        lastModelFailure: modelFailure
      }
      yield* ports.checkpoint(state)
    }

    // nothing came of the run because a model failed on every iteration: that failure is its outcome
    if (state.iteration > 0 && state.modelFailuresInARow === state.iteration) {
      const failure = state.lastModelFailure ?? "the analysis or mutation model failed"
      return yield* fail(`${failure} (on every one of the ${state.iteration} iterations)`)
    }
    const frontier = paretoFrontier(new Map(Object.entries(state.scores)), scoredIds, settings.objectives)
    const onFrontier = new Set(frontier.members)
    return {
      variants: state.candidates.filter((candidate) => candidate.iteration > 0 && onFrontier.has(candidate.name)),
      statistics: Object.fromEntries(Object.entries(state.scores).map(([name, table]) => [name, statistics(table, scoredIds, settings.objectives)])),
      iterations: state.iteration,
      invalid: state.invalid
    }
  })
