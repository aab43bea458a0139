/**
 * Rate limit rules (spec 2.1 `rate_limiting`, 8): which rules apply to a request, and which
 * buckets a model call takes from. Pure; the buckets themselves live in `RateLimitBuckets` (src/ratelimit/store.ts).
 *
 * A rule applies when every condition of its scope holds; among the rules that apply, only
 * those of the highest priority count (so a rule for one key, given a higher priority,
 * overrides a `gateway::each` rule for that key), plus the `always` rules, which count
 * whatever the priorities. Each limit of a rule is a token bucket:
 * `N` per period means a capacity of N refilled at N per period; `{capacity, refill_rate}`
 * sets both (refill_rate per period).
 */
import { createHash } from "node:crypto"

/** an amount to take from one bucket, made by the rules for one call (the store takes them all or none) */
export interface BucketRequest {
  readonly key: string
  readonly capacity: number
  readonly refillPerSecond: number
  readonly amount: number
}

/** the longest Retry-After sent: a period of the longest kind (rate limits and budgets) */
export const maxRetryAfterS = 2_592_000

export const periods = ["second", "minute", "hour", "day", "week", "month"] as const
export type Period = typeof periods[number]

export const periodSeconds: Readonly<Record<Period, number>> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
  month: 2_592_000
}

/** `cost`: in the unit of the providers' `cost` prices (see `inference/cost.ts`) */
export type Resource = "model_inferences" | "tokens" | "cost"

export interface Limit {
  readonly resource: Resource
  readonly period: Period
  readonly capacity: number
  readonly refillPerSecond: number
}

export const eachValue = "gateway::each"
export const totalValue = "gateway::total"

export type ScopeCondition =
  | { readonly kind: "api_key"; readonly publicId: string }
  /** the caller's workspace (src/workspace.ts): one name, or `gateway::each` (each workspace its own) */
  | { readonly kind: "workspace"; readonly workspace: string }
  | { readonly kind: "tag"; readonly key: string; readonly value: string }

export interface RateLimitRule {
  /** position in `rate_limiting.rules`, for messages */
  readonly index: number
  /** `always`: the rule counts whenever its scope holds, beside the highest-priority rules */
  readonly priority: number | "always"
  readonly scope: ReadonlyArray<ScopeCondition>
  readonly limits: ReadonlyArray<Limit>
  /** a stable id from the rule's definition: a changed rule starts with fresh buckets */
  readonly id: string
}

export const ruleId = (priority: number | "always", scope: ReadonlyArray<ScopeCondition>, limits: ReadonlyArray<Limit>): string =>
  createHash("sha256").update(JSON.stringify([priority, scope, limits])).digest("hex").slice(0, 16)

/** What a request is known by, for scopes: its API key, its workspace and its tags. */
export interface RequestScope {
  readonly publicId?: string | undefined
  readonly workspace: string
  readonly tags: Readonly<Record<string, string>>
}

export const holds = (condition: ScopeCondition, request: RequestScope): boolean => {
  if (condition.kind === "api_key") {
    return request.publicId !== undefined && (condition.publicId === eachValue || condition.publicId === request.publicId)
  }
  if (condition.kind === "workspace") return condition.workspace === eachValue || condition.workspace === request.workspace
  const value = request.tags[condition.key]
  if (value === undefined) return false
  return condition.value === eachValue || condition.value === totalValue || condition.value === value
}

/** The rules that count for a request: those that apply, of the highest priority among them, and the `always` ones (in order). */
export const applicableRules = (rules: ReadonlyArray<RateLimitRule>, request: RequestScope): ReadonlyArray<RateLimitRule> => {
  let best = -Infinity
  let chosen: Array<RateLimitRule> = []
  for (const rule of rules) {
    if (!rule.scope.every((condition) => holds(condition, request))) continue
    if (rule.priority === "always" || rule.priority === best) chosen.push(rule)
    else if (rule.priority > best) {
      best = rule.priority
      chosen = chosen.filter((kept) => kept.priority === "always")
      chosen.push(rule)
    }
  }
  return chosen
}

/** the scope's values for this request: one bucket per key or workspace (`each`), per tag value (`each`), or one for all (`total`) */
export const scopeValues = (scope: ReadonlyArray<ScopeCondition>, request: RequestScope): ReadonlyArray<string> =>
  scope.map((condition) =>
    condition.kind === "api_key"
      ? `key=${request.publicId}`
      : condition.kind === "workspace"
      ? `workspace=${request.workspace}`
      : `${condition.key}=${condition.value === totalValue ? "*" : request.tags[condition.key]}`
  )

/** `api_key_public_id=abc, tag user=ada`: the scope as a person reads it */
export const describeScope = (scope: ReadonlyArray<ScopeCondition>, request: RequestScope): string => {
  if (scope.length === 0) return "every request"
  return scope.map((condition) =>
    condition.kind === "api_key"
      ? `api_key_public_id=${request.publicId}`
      : condition.kind === "workspace"
      ? `workspace ${request.workspace}`
      : condition.value === totalValue
      ? `every request tagged ${condition.key}`
      : `tag ${condition.key}=${request.tags[condition.key]}`
  ).join(", ")
}

export interface PlannedBucket {
  readonly rule: RateLimitRule
  readonly limit: Limit
  readonly request: BucketRequest
}

const bucketKey = (rule: RateLimitRule, limit: Limit, values: ReadonlyArray<string>): string =>
  `${rule.id}:${limit.resource}:${limit.period}:${createHash("sha256").update(values.join("\u0000")).digest("hex").slice(0, 24)}`

/** The buckets one model call takes from, with `tokens` as the amount for token limits, `cost` for cost limits. */
export const plannedBuckets = (
  rules: ReadonlyArray<RateLimitRule>,
  request: RequestScope,
  tokens: number,
  cost = 0
): ReadonlyArray<PlannedBucket> =>
  rules.flatMap((rule) => {
    const values = scopeValues(rule.scope, request)
    return rule.limits.map((limit) => ({
      rule,
      limit,
      request: {
        key: bucketKey(rule, limit, values),
        capacity: limit.capacity,
        refillPerSecond: limit.refillPerSecond,
        amount: limit.resource === "model_inferences" ? 1 : limit.resource === "tokens" ? tokens : cost
      }
    }))
  })

/**
 * The length of `value` as JSON text, but for escapes (a quote or a line break counts as one
 * character, not two): enough for an estimate, and no text of megabytes made to measure it.
 */
export const jsonLength = (value: unknown): number => {
  if (typeof value === "string") return value.length + 2
  if (typeof value === "number" || typeof value === "boolean") return String(value).length
  if (value === null || typeof value !== "object") return 4
  // brackets, and a comma after each entry but the last
  let length = 1
  if (Array.isArray(value)) {
    for (const item of value) length += jsonLength(item) + 1
  } else {
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key]
      if (item !== undefined) length += key.length + 4 + jsonLength(item)
    }
  }
  return length === 1 ? 2 : length
}

/** A rough count of the tokens in `characters` of text (about four characters each), for borrowing up front. */
export const estimateTokens = (characters: number): number => Math.ceil(characters / 4)

export const describeLimit = (limit: Limit): string => {
  const what = limit.resource === "model_inferences" ? "model inferences" : limit.resource === "tokens" ? "tokens" : "cost"
  const perPeriod = limit.refillPerSecond * periodSeconds[limit.period]
  return perPeriod === limit.capacity
    ? `${limit.capacity} ${what} per ${limit.period}`
    : `${limit.capacity} ${what} (refilled at ${perPeriod} per ${limit.period})`
}
