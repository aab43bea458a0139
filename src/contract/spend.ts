/** The endpoint of SpendGroup (the HttpApi contract), over the answer Schema of src/api/spend.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { maxSpendRangeDays, SpendAnswer } from "../api/spend.ts"
import { AdminOnly, AdminPurpose, requiresKey } from "./guard.ts"

const text = (description: string) => Schema.optional(Schema.String).annotate({ description })

export const SpendGroup = HttpApiGroup.make("spend")
  .add(
    HttpApiEndpoint.get("getSpend", "/v1/spend", {
      query: {
        api_key: text("the calls of this API key only: its public id (the 12 characters after sk-gw-, or sk-t0- for a key imported from TensorZero)"),
        tag_key: text("with tag_value: the calls of inferences carrying this tag only"),
        tag_value: text("the tag's value"),
        from: text("calls at or after this time (RFC 3339; default: the start of the period 30 days, 12 weeks or a year before `to`)"),
        to: text("calls before this time (RFC 3339; default: now)"),
        granularity: text("`day` (the default), `week` (from Monday) or `month`, in UTC")
      },
      success: SpendAnswer,
      error: gatewayErrors([400, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "What the stored model calls of the workspace cost, per period: the whole workspace, one API key or one tag",
      description: "400: a scope half given or both given, a time that is not RFC 3339, `from` not before `to`, an unknown granularity, or a range longer than " +
        `${maxSpendRangeDays.day} days (day), ${maxSpendRangeDays.week} days (week) or ${maxSpendRangeDays.month} days (month). ` +
        "503: observability is off or its database does not answer."
    }))
  )
  .annotate(AdminOnly, true)
  .annotate(AdminPurpose, "reading spend")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Spend" }))
