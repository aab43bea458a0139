/**
 * The API reference, served from this definition itself: the OpenAPI document and a page that
 * renders it. Both answer without an API key.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Open } from "./guard.ts"

export const openApiPath = "/openapi.json"
export const docsPath = "/docs"

export const ReferenceGroup = HttpApiGroup.make("reference")
  .add(
    HttpApiEndpoint.get("openapi", openApiPath, {
      success: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "OpenAPI 3.1" })
    }).annotateMerge(OpenApi.annotations({ summary: "This document" })),
    HttpApiEndpoint.get("docs", docsPath, {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))
    }).annotateMerge(OpenApi.annotations({ summary: "This document as a page to read and try" }))
  )
  .annotate(Open, true)
  .annotateMerge(OpenApi.annotations({ title: "API reference" }))
