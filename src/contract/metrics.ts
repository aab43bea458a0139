/**
 * The wire contract of `GET /metrics`: the gateway's metrics in Prometheus' text format,
 * summed over every worker. Like `/status` it answers without an API key, unless
 * `[gateway.metrics] require_auth = true` puts it behind one (and authentication is on).
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Open } from "./guard.ts"

export const metricsPath = "/metrics"

export const MetricsGroup = HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", metricsPath, {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    }).annotateMerge(OpenApi.annotations({
      summary: "The gateway's metrics in Prometheus' text format",
      description: "Open like /status, unless `[gateway.metrics] require_auth = true` (then it needs an API key when authentication is on)."
    }))
  )
  .annotate(Open, true)
  .annotateMerge(OpenApi.annotations({ title: "Metrics" }))
