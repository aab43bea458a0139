/**
 * The request and answer Schemas of `GET /v1/experimentation/{function_name}`: how a function's variants are
 * drawn right now. Adaptive experiments (`[functions.<fn>.experimentation] type = "adaptive"`)
 * answer the newest probabilities computed from their metric's feedback, with each candidate's
 * statistics; static ones and functions without experimentation answer their normalized weights.
 */
import * as Schema from "effect/Schema"

const Probability = Schema.Finite.annotate({ description: "between 0 and 1; a function's sum to 1" })
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC" })

export const VariantStatisticsJson = Schema.Struct({
  count: Schema.Int.annotate({ description: "the variant's targets with feedback of the metric (the latest value of each counts)" }),
  mean: Schema.NullOr(Schema.Finite).annotate({ description: "their mean (booleans as 0 and 1); null without any" }),
  variance: Schema.NullOr(Schema.Finite).annotate({ description: "their population variance; null without any" })
}).annotate({ identifier: "VariantStatistics" })

export const ExperimentationResponse = Schema.Struct({
  function_name: Schema.String,
  type: Schema.Literals(["adaptive", "static", "weights"]).annotate({
    description: "`adaptive`: a bandit over candidate variants; `static`: configured candidate weights; `weights`: no experimentation, the variants' `weight`s"
  }),
  probabilities: Schema.Record(Schema.String, Probability).annotate({
    description: "the probability of each variant being tried first in a new episode: every candidate of an adaptive experiment; the variants of positive weight otherwise"
  }),
  fallback_variants: Schema.optional(Schema.Array(Schema.String)).annotate({ description: "tried in this order once every candidate failed" }),
  metric: Schema.optional(Schema.String).annotate({ description: "adaptive: the metric whose feedback drives the experiment" }),
  optimize: Schema.optional(Schema.Literals(["max", "min"])),
  statistics: Schema.optional(Schema.Record(Schema.String, VariantStatisticsJson)).annotate({
    description: "adaptive: each candidate's feedback when the probabilities were computed"
  }),
  computed_at: Schema.optional(Schema.NullOr(Timestamp)).annotate({
    description: "adaptive: when the probabilities were computed; null before the first computation (candidates are then drawn uniformly)"
  }),
  in_force_from: Schema.optional(Schema.NullOr(Timestamp)).annotate({
    description: "adaptive: from when new episodes draw with them (every gateway process has read them by then)"
  }),
  stopped: Schema.optional(Schema.Boolean).annotate({ description: "adaptive: the best candidate was identified; it gets all the probability `min_prob` leaves" }),
  winner: Schema.optional(Schema.String),
  exploring: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "adaptive: candidates with fewer than `min_samples_per_variant` observations, each drawn with probability 1/K"
  }),
  update_period_s: Schema.optional(Schema.Finite)
}).annotate({ identifier: "Experimentation" })
export type ExperimentationResponse = typeof ExperimentationResponse.Type
