/** The endpoints of AuditGroup (the HttpApi contract), over the answer Schemas of src/api/audit.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AuditPage, auditPageLimit } from "../api/audit.ts"
import { AdminOnly, AdminPurpose, requiresKey } from "./guard.ts"

const text = (description: string) => Schema.optional(Schema.String).annotate({ description })

export const AuditGroup = HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("listAudit", "/v1/audit", {
      query: {
        actor: text("entries of this actor only: a key's public id, or the command line's OS user"),
        action: text("entries of this action only, e.g. api_key.create"),
        workspace: text("a global admin's filter: one workspace's entries (a workspace admin reads its own only)"),
        since: text("entries at or after this time (RFC 3339)"),
        until: text("entries before this time (RFC 3339)"),
        before: text("the page after this entry id: the previous page's `next`"),
        limit: text(`entries per page, 1 to ${auditPageLimit.max} (default ${auditPageLimit.default})`),
        format: text("`json` (the default: one page) or `jsonl` (every matching entry, one per line, newest first)")
      },
      success: AuditPage,
      error: gatewayErrors([400, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Read the audit log: administrative acts, newest first" }))
  )
  .annotate(AdminOnly, true)
  .annotate(AdminPurpose, "reading the audit log")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Audit" }))
