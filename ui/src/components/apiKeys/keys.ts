/** The API keys as the page reads them (`GET /v1/ui/api_keys`), and what a key's row says of it. */
import { useQuery } from "@tanstack/react-query"
import type { UiApiKey, UiApiKeyList } from "../../../../src/api/uiApiKeys.ts"
import { api } from "../../api.ts"

export const apiKeysQueryKey = ["ui-api-keys"] as const

export const useApiKeys = () => useQuery({ queryKey: apiKeysQueryKey, queryFn: () => api<UiApiKeyList>("/v1/ui/api_keys") })

export type KeyStatus = "active" | "expired" | "disabled"

export const statusOf = (key: UiApiKey, now: number): KeyStatus =>
  key.disabled_at !== null ? "disabled" : key.expires_at !== null && Date.parse(key.expires_at) <= now ? "expired" : "active"
