/**
 * Which Redis/Valkey the gateway uses (rate limit buckets, the inference cache): GATEWAY_REDIS_URL,
 * or GATEWAY_VALKEY_URL (TensorZero's TENSORZERO_VALKEY_URL, renamed) when that is unset. Kept
 * apart from the client so that reading it loads no Redis code.
 */
type Env = Readonly<Record<string, string | undefined>>

export const redisUrlVariable = "GATEWAY_REDIS_URL"
export const valkeyUrlVariable = "GATEWAY_VALKEY_URL"

/** the URL and the variable that gave it, or undefined when neither is set */
export const redisUrlOf = (env: Env): { readonly url: string; readonly variable: string } | undefined => {
  for (const variable of [redisUrlVariable, valkeyUrlVariable]) {
    const url = env[variable]
    if (url !== undefined && url !== "") return { url, variable }
  }
  return undefined
}
