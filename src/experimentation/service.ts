/**
 * Adaptive experimentation at run time. For each function with `type = "adaptive"`, every
 * gateway process:
 * - reads the newest stored sampling probabilities at start and every few seconds after
 *   (`SamplingHistory`: which computation an episode draws with);
 * - every `update_period_s`, unless another process computed within the period: reads the
 *   metric's feedback per candidate, runs Track-and-Stop (trackAndStop.ts) and stores the
 *   result. With durable tasks (a relational database) this runs under a lock shared by every
 *   process, which re-checks the newest computation first, so one process computes per
 *   period; without, each process may (the same data gives the same probabilities).
 * Inference preparation reads `weights` synchronously: a lookup in memory, no I/O. Without
 * observability there is no feedback to learn from: candidates are drawn uniformly, and the
 * start-up log says so.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { ExperimentationResponse } from "../api/experimentation.ts"
import type { AdaptiveExperimentation, FunctionConfig, MetricConfig } from "../config/types.ts"
import { NotFound } from "../errors.ts"
import { uuidv7, uuidv7Timestamp } from "../ids.ts"
import type { AdaptiveWeights } from "../inference/variantDraw.ts"
import { analyticsUrlVariable } from "../analytics/stores.ts"
import { Configuration } from "../services.ts"
import type { StoreError } from "../storeError.ts"
import { Tasks } from "../tasks/service.ts"
import { historyLength, SamplingHistory } from "./history.ts"
import { type ExperimentationStore, ExperimentationStoreService, type StoredSampling } from "./store.ts"
import { trackAndStop } from "./trackAndStop.ts"
import { experimentationView } from "./view.ts"

export class Experimentation extends Context.Service<Experimentation, {
  /** the candidates' probabilities in force for an episode of an adaptive function (undefined: draw uniformly) */
  readonly weights: AdaptiveWeights
  /** `GET /v1/experimentation/{function_name}` */
  readonly describe: (functionName: string) => Effect.Effect<ExperimentationResponse, NotFound>
}>()("gateway/Experimentation") {
  static readonly layer = Layer.effect(Experimentation, Effect.suspend(() => make))
}

/** An adaptive function as this process runs it. */
interface Experiment {
  readonly fn: FunctionConfig
  readonly settings: AdaptiveExperimentation
  readonly metric: MetricConfig
  readonly candidates: ReadonlyArray<string>
  /** the settings its computations are stored under */
  readonly configKey: string
  /** how often the stored probabilities are read (at most the update period) */
  readonly readEveryMs: number
  history: SamplingHistory
  /** the last failure logged, so that an outage is logged once, not at every read */
  failing?: string | undefined
}

/** read at least this often, so that a computation reaches every process soon after it is made */
const maxReadEveryMs = 10_000
/** a computation comes into force this many read intervals after it is made (one, and room for slow reads and clock skew) */
const readsBeforeInForce = 2
/** a failed read at start waits no longer than this: the gateway starts drawing uniformly */
const startReadTimeout = Duration.seconds(5)

/** What the computations of an experiment depend on: another key starts afresh. */
export const configKeyOf = (candidates: ReadonlyArray<string>, settings: AdaptiveExperimentation, metric: MetricConfig): string =>
  JSON.stringify({
    metric: metric.name,
    type: metric.type,
    level: metric.level,
    optimize: metric.optimize,
    candidates,
    epsilon: settings.epsilon,
    delta: settings.delta,
    min_prob: settings.minProb,
    min_samples_per_variant: settings.minSamplesPerVariant
  })

const make = Effect.gen(function*() {
  const config = yield* Configuration
  const { store } = yield* ExperimentationStoreService
  const tasks = yield* Tasks
  const experiments = new Map<string, Experiment>()
  for (const [name, fn] of config.functions) {
    const settings = fn.experimentation?.adaptive
    if (settings === undefined) continue
    const metric = config.metrics.get(settings.metric)!
    const candidates = fn.experimentation!.candidates.map(({ name }) => name)
    const readEveryMs = Math.min(settings.updatePeriodS * 1000, maxReadEveryMs)
    experiments.set(name, {
      fn,
      settings,
      metric,
      candidates,
      configKey: configKeyOf(candidates, settings, metric),
      readEveryMs,
      history: new SamplingHistory(candidates, readsBeforeInForce * readEveryMs)
    })
  }

  // on every inference's preparation: 4 ns for a function without an adaptive experiment, 40 ns with one (measured)
  const weights: AdaptiveWeights = (functionName, episodeId) => experiments.get(functionName)?.history.at(uuidv7Timestamp(episodeId))?.weights

  const describe = (functionName: string) =>
    Effect.suspend(() => {
      const fn = config.functions.get(functionName)
      if (fn === undefined) return Effect.fail(new NotFound({ message: `unknown function "${functionName}"` }))
      const experiment = experiments.get(functionName)
      return Effect.succeed(experimentationView(fn, experiment && { metric: experiment.metric, newest: experiment.history.newest }))
    })

  const service = Experimentation.of({ weights, describe })
  if (experiments.size === 0) return service
  if (store === undefined) {
    for (const name of experiments.keys()) {
      yield* Effect.logWarning(
        `function "${name}": adaptive experimentation learns from feedback in the analytics database, and observability is off ` +
          `(set ${analyticsUrlVariable}): its candidates are drawn uniformly`
      )
    }
    return service
  }
  for (const [name, experiment] of experiments) {
    // the newest computations, so that episodes under way keep drawing with theirs
    const initial = yield* store.latestSamplings(name, experiment.configKey, historyLength).pipe(
      Effect.timeoutOrElse({ duration: startReadTimeout, orElse: () => Effect.fail({ message: "no answer within 5 s" }) }),
      Effect.catch((error: { readonly message: string }) =>
        Effect.as(Effect.logWarning(`function "${name}": adaptive experimentation could not read its probabilities at start (drawing uniformly until it can): ${error.message}`), undefined)
      )
    )
    if (initial !== undefined) {
      experiment.history = new SamplingHistory(experiment.candidates, readsBeforeInForce * experiment.readEveryMs, initial, initial.length < historyLength)
    }
    yield* Effect.forkScoped(
      runExperiment(name, experiment, store, tasks).pipe(Effect.repeat(Schedule.spaced(Duration.millis(experiment.readEveryMs))))
    )
  }
  yield* Effect.logInfo(`adaptive experimentation: ${[...experiments.keys()].join(", ")}`)
  return service
})

/** One turn of an experiment: read the newest computations, compute if one is due, read again. Never fails (it logs). */
const runExperiment = (name: string, experiment: Experiment, store: ExperimentationStore, tasks: Tasks["Service"]) => {
  const periodMs = experiment.settings.updatePeriodS * 1000
  // due once a period has passed, give or take half a read interval (turns are that far apart)
  const due = (newest: StoredSampling | undefined, now: number) => newest === undefined || now - newest.computedAt >= periodMs - experiment.readEveryMs / 2

  const read = Effect.map(store.latestSamplings(name, experiment.configKey, 8), (samplings) => {
    experiment.history.add(samplings)
    return samplings[0]
  })

  const compute = Effect.gen(function*() {
    const [newest] = yield* store.latestSamplings(name, experiment.configKey, 1)
    const now = yield* Clock.currentTimeMillis
    if (!due(newest, now)) return
    const statistics = yield* store.variantStatistics({
      functionName: name,
      metricName: experiment.metric.name,
      metricType: experiment.metric.type,
      level: experiment.metric.level
    })
    const { settings } = experiment
    const decision = trackAndStop(
      experiment.candidates,
      statistics,
      {
        epsilon: settings.epsilon,
        delta: settings.delta,
        minProb: settings.minProb,
        minSamplesPerVariant: settings.minSamplesPerVariant,
        optimize: experiment.metric.optimize,
        metricType: experiment.metric.type
      },
      newest?.stopped === true ? newest.winner : undefined
    )
    const sampling: StoredSampling = {
      id: uuidv7(now),
      functionName: name,
      configKey: experiment.configKey,
      computedAt: now,
      probabilities: decision.probabilities,
      statistics: statistics.filter((stats) => experiment.candidates.includes(stats.name)),
      stopped: decision.stopped,
      ...(decision.winner !== undefined && { winner: decision.winner }),
      exploring: decision.exploring
    }
    yield* store.saveSampling(sampling)
    if (decision.stopped && newest?.stopped !== true) {
      yield* Effect.logInfo(`function "${name}": adaptive experimentation stopped: "${decision.winner}" is the best candidate on "${experiment.metric.name}"`)
    }
  })

  const turn = Effect.gen(function*() {
    const newest = yield* read
    const now = yield* Clock.currentTimeMillis
    if (!due(newest, now)) return
    if (tasks.available) yield* tasks.exclusive(`experimentation:${name}`, compute)
    else yield* compute
    yield* read
  })

  return turn.pipe(
    Effect.matchEffect({
      onSuccess: () => {
        if (experiment.failing === undefined) return Effect.void
        experiment.failing = undefined
        return Effect.logInfo(`function "${name}": adaptive experimentation reads and stores its probabilities again`)
      },
      onFailure: (error: StoreError | { readonly message: string }) => {
        if (experiment.failing === error.message) return Effect.void
        experiment.failing = error.message
        return Effect.logWarning(`function "${name}": adaptive experimentation could not update its probabilities (it keeps the last it read): ${error.message}`)
      }
    })
  )
}
