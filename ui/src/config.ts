/** The gateway's configuration as the UI reads it (`GET /v1/ui/config`), fetched once per visit: it changes only with a restart. */
import { useQuery } from "@tanstack/react-query"
import type { UiConfig } from "../../src/api/uiConfig.ts"
import { api } from "./api.ts"

export const useUiConfig = () => useQuery({ queryKey: ["ui-config"], queryFn: () => api<UiConfig>("/v1/ui/config"), staleTime: Infinity })
