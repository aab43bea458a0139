/** The UI's session (src/api/uiSession.ts): whether a key is needed, and whether this browser has signed in. */
import { useQuery, useQueryClient } from "@tanstack/react-query"
import type { UiSession } from "../../src/api/uiSession.ts"
import { api } from "./api.ts"

export const sessionKey = ["ui-session"] as const

export const useSession = () => useQuery({ queryKey: sessionKey, queryFn: () => api<UiSession>("/v1/ui/session"), staleTime: 60_000 })

export const useSignOut = () => {
  const client = useQueryClient()
  return async () => {
    const session = await api<UiSession>("/v1/ui/session", { method: "DELETE" })
    // nothing read with the session stays; the session itself is set rather than cleared, so that
    // the App observing it shows the sign-in page (`clear()` would leave it observing a removed query)
    client.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] })
    client.setQueryData(sessionKey, session)
  }
}
