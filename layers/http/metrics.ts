/** GET /metrics: the gateway's metrics in Prometheus' text format (layers/metrics/prometheus.ts). */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { InternalError } from "../../src/errors.ts"
import { Metrics } from "../../src/metrics/metrics.ts"

export const metricsHandler = Effect.flatMap(Metrics, (metrics) =>
  metrics.scrape.pipe(
    Effect.map(({ contentType, text }) => HttpServerResponse.text(text, { contentType })),
    Effect.catch((error) => Effect.fail(new InternalError({ message: `metrics: ${error.message}` })))
  ))
