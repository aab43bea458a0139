/**
 * `gateway audit list`: the audit log's entries (src/audit/), newest first, as JSON Lines on
 * stdout (the same objects `GET /v1/audit` answers), filtered like the route. The operator's
 * tool: every workspace unless `--workspace` names one.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { makeAuditLog } from "../../src/audit/service.ts"
import { keyStoreMissing } from "../../src/auth/keyAdministration.ts"
import { parseRfc3339 } from "../../src/time.ts"
import { workspaceNameProblem } from "../../src/workspace.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { auditEntryJson } from "../http/audit.ts"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { StartupError } from "../startup.ts"
import { commandEnv } from "./configuration.ts"
import { failWith } from "./exit.ts"

export interface AuditListFlags {
  readonly workspace: Option.Option<string>
  readonly actor: Option.Option<string>
  readonly action: Option.Option<string>
  readonly since: Option.Option<string>
  readonly until: Option.Option<string>
  readonly limit: number
}

/** why the flags cannot be used (a usage error), or the query they make */
const queryOf = (flags: AuditListFlags) => {
  const workspace = Option.getOrUndefined(flags.workspace)
  const problem = workspace === undefined ? undefined : workspaceNameProblem(workspace, "--workspace")
  if (problem !== undefined) return problem
  const times: Record<string, number | undefined> = {}
  for (const [name, given] of [["since", flags.since], ["until", flags.until]] as const) {
    if (Option.isNone(given)) continue
    const time = parseRfc3339(given.value)
    if (time === undefined) return `--${name}: expected an RFC 3339 time such as 2026-12-31T23:59:59Z, got "${given.value}"`
    times[name] = time
  }
  if (!Number.isInteger(flags.limit) || flags.limit < 1) return `--limit: expected a positive integer, got ${flags.limit}`
  return {
    workspace,
    actor: Option.getOrUndefined(flags.actor),
    action: Option.getOrUndefined(flags.action),
    since: times.since,
    until: times.until,
    limit: flags.limit
  }
}

export const auditList = (flags: AuditListFlags, logFormat: LogFormat) => {
  const query = queryOf(flags)
  if (typeof query === "string") return failWith(2, [query])
  return Effect.gen(function*() {
    const store = yield* configuredRelationalStore(yield* commandEnv)
    if (store === undefined) return yield* new StartupError({ message: keyStoreMissing.replace("API keys live", "the audit log lives") })
    yield* migrateRelationalStore(store)
    const entries = yield* Effect.mapError(
      makeAuditLog(store.audit, Date.now).list(query),
      (error) => new StartupError({ message: `could not read the audit log: ${error.message}` })
    )
    for (const entry of entries) yield* Console.log(JSON.stringify(auditEntryJson(entry)))
  }).pipe(
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(logFormat))
  )
}
