/** The endpoints of StatusGroup (the HttpApi contract), over the request and answer Schemas of src/api/status.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Open } from "./guard.ts"
import { HealthFailure, HealthResponse, StatusResponse } from "../api/status.ts"

export const StatusGroup = HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.get("status", "/status", { success: StatusResponse })
      .annotateMerge(OpenApi.annotations({ summary: "Whether the gateway runs, with its queues' counters" })),
    HttpApiEndpoint.get("health", "/health", { success: HealthResponse, error: HealthFailure })
      .annotateMerge(OpenApi.annotations({ summary: "Whether the gateway and its database answer" }))
  )
  .annotate(Open, true)
  .annotateMerge(OpenApi.annotations({ title: "Status" }))
