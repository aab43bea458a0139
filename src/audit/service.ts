/**
 * The audit log (issue 39): every administrative act — keys created and disabled, configuration
 * reloads, dataset deletions and imports, evaluation and optimization launches and
 * cancellations, sign-ins and failed sign-ins to the UI — with who, what, when, from where and
 * how it ended. Each act is a log line (always) and an entry of the relational database's
 * append-only table (when there is one). Recording never fails the act it records: the act has
 * happened; a store that cannot take the entry is an error in the log. Routes name their act in
 * the contract (`Audited`, src/contract/guard.ts) and the guard records it (layers/http/guard.ts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { ServiceUnavailable } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import type { Caller } from "../workspace.ts"
import type { ActorKind, AuditEntry, AuditQuery, AuditStore } from "./store.ts"

/** an act to record: an entry without its id and time */
export type AuditAct = Omit<AuditEntry, "id" | "at">

export class AuditLog extends Context.Service<AuditLog, {
  /** whether entries are stored (a relational database is configured), not only logged */
  readonly stored: boolean
  readonly record: (act: AuditAct) => Effect.Effect<void>
  /** the matching entries, newest first; a 503 without a relational database */
  readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, ServiceUnavailable>
}>()("gateway/AuditLog") {}

/** who `caller` is, as an entry says it */
export const actorOf = (caller: Caller): { readonly actorKind: ActorKind; readonly actor?: string | undefined } =>
  caller.via === "oidc"
    ? { actorKind: "oidc", actor: caller.identity }
    : caller.publicId === undefined ? { actorKind: "open" } : { actorKind: caller.via === "session" ? "ui_session" : "api_key", actor: caller.publicId }

const describe = (act: AuditAct) =>
  `audit: ${act.action}${act.target === undefined ? "" : ` ${act.target}`} ${act.outcome}` +
  `${act.status === undefined ? "" : ` (${act.status})`} by ${act.actor ?? act.actorKind} in workspace ${act.workspace}` +
  `${act.address === undefined ? "" : ` from ${act.address}`}`

export const makeAuditLog = (store: AuditStore | undefined, now: () => number): AuditLog["Service"] => ({
  stored: store !== undefined,
  record: (act) =>
    Effect.suspend(() => {
      const at = now()
      const logged = Effect.logInfo(describe(act))
      if (store === undefined) return logged
      return Effect.andThen(
        logged,
        store.append({ ...act, id: uuidv7(at), at }).pipe(
          Effect.catch((error) => Effect.logError(`audit: could not store the entry of ${act.action}: ${error.message}`))
        )
      )
    }),
  list: (query) =>
    store === undefined
      ? Effect.fail(new ServiceUnavailable({ message: "the audit log lives in the relational database: set GATEWAY_RELATIONAL_DB_URL" }))
      : Effect.mapError(store.list(query), (error) => new ServiceUnavailable({ message: `the relational database is unavailable: ${error.message}` }))
})
