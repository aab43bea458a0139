/** `[rate_limiting]` -> whether limits apply, the rules (each turned into buckets by `ratelimit/config.ts`) and the budgets. */
import type { Budget } from "../budgets/budget.ts"
import { configuredBudget } from "./budgets.ts"
import { rateLimitRule } from "./rateLimitRules.ts"
import type { RateLimitRule } from "../ratelimit/rules.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { RawBudget, RawRateLimiting, RawRateLimitRule } from "./raw.ts"
import type { RateLimitingSettings } from "./types.ts"

const decodeRateLimiting = tableDecoder(RawRateLimiting)
const decodeRateLimitRule = tableDecoder(RawRateLimitRule)
const decodeBudget = tableDecoder(RawBudget)

export const buildRateLimiting = (context: BuildContext, table: unknown): RateLimitingSettings => {
  const raw = context.decodeAt(decodeRateLimiting, table, ["rate_limiting"]) ?? {}
  const rules: Array<RateLimitRule> = []
  ;(raw.rules ?? []).forEach((ruleTable, index) => {
    const keyPath = ["rate_limiting", "rules", index]
    const decoded = context.decodeAt(decodeRateLimitRule, ruleTable, keyPath)
    if (decoded === undefined) return
    const rule = rateLimitRule(index, decoded)
    if ("path" in rule) context.report([...keyPath, ...rule.path], rule.message)
    else rules.push(rule)
  })
  const budgets: Array<Budget> = []
  ;(raw.budgets ?? []).forEach((budgetTable, index) => {
    const keyPath = ["rate_limiting", "budgets", index]
    const decoded = context.decodeAt(decodeBudget, budgetTable, keyPath)
    if (decoded === undefined) return
    const budget = configuredBudget(decoded)
    if ("path" in budget) context.report([...keyPath, ...budget.path], budget.message)
    else budgets.push(budget)
  })
  const enabled = raw.enabled ?? true
  // `enabled = false` turns off all of [rate_limiting]: its rules and its budgets
  return { enabled, rules, defaultCost: raw.default_cost ?? 0, budgets: enabled ? budgets : [] }
}
