/** `[rate_limiting]` -> whether limits apply, and the rules (each turned into buckets by `ratelimit/config.ts`). */
import { rateLimitRule } from "./rateLimitRules.ts"
import type { RateLimitRule } from "../ratelimit/rules.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { RawRateLimiting, RawRateLimitRule } from "./raw.ts"
import type { RateLimitingSettings } from "./types.ts"

const decodeRateLimiting = tableDecoder(RawRateLimiting)
const decodeRateLimitRule = tableDecoder(RawRateLimitRule)

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
  return { enabled: raw.enabled ?? true, rules, defaultCost: raw.default_cost ?? 0 }
}
