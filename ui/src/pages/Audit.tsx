/**
 * The audit log (`GET /v1/audit`): administrative acts in the workspace (every workspace's for a
 * global admin), newest first, filtered by action and actor, a page at a time; the whole
 * selection downloads as JSON Lines.
 */
import { useQuery } from "@tanstack/react-query"
import { useState } from "react"
import type { AuditEntryJson, AuditPage } from "../../../src/api/audit.ts"
import { api, basePath } from "../api.ts"
import { Badge, Card, ErrorNotice, formatTime, Loading, Page, Table, TextField } from "../components/ui.tsx"

const pageSize = 50

const queryOf = (filters: { action: string; actor: string }, before: string | undefined, extra: Record<string, string> = {}) => {
  const params = new URLSearchParams({ limit: String(pageSize), ...extra })
  if (filters.action.trim() !== "") params.set("action", filters.action.trim())
  if (filters.actor.trim() !== "") params.set("actor", filters.actor.trim())
  if (before !== undefined) params.set("before", before)
  return params.toString()
}

export default function Audit() {
  const [filters, setFilters] = useState({ action: "", actor: "" })
  // the cursors of the pages before this one, to go back
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const before = cursors[cursors.length - 1]
  const entries = useQuery({
    queryKey: ["audit", filters, before],
    queryFn: () => api<AuditPage>(`/v1/audit?${queryOf(filters, before)}`)
  })
  const filter = (change: Partial<typeof filters>) => {
    setFilters({ ...filters, ...change })
    setCursors([undefined])
  }
  return (
    <Page title="Audit log">
      <Card title="Filter">
        <div className="row">
          <TextField label="Action" value={filters.action} onChange={(action) => filter({ action })} placeholder="api_key.create" />
          <TextField label="Actor" value={filters.actor} onChange={(actor) => filter({ actor })} placeholder="a key's public id" />
        </div>
        <p>
          <a className="button secondary" href={`${basePath}/v1/audit?${queryOf(filters, undefined, { format: "jsonl", limit: "1000" })}`} download="audit.jsonl">
            Download as JSON Lines
          </a>
        </p>
      </Card>
      <Card title="Entries">
        {entries.isPending && <Loading what="the audit log" />}
        <ErrorNotice error={entries.error} />
        {entries.data !== undefined && (
          <>
            <Table<AuditEntryJson>
              caption="Audit log entries, newest first"
              rows={entries.data.entries}
              rowKey={(entry) => entry.id}
              empty="No entry matches."
              columns={[
                { header: "Time", cell: (entry) => formatTime(entry.time) },
                { header: "Workspace", cell: (entry) => entry.workspace },
                { header: "Actor", cell: (entry) => <span className="mono">{entry.actor ?? entry.actor_kind}</span> },
                { header: "Action", cell: (entry) => <span className="mono">{entry.action}</span> },
                { header: "Target", cell: (entry) => <span className="mono">{entry.target ?? ""}</span> },
                {
                  header: "Outcome",
                  cell: (entry) => <Badge tone={entry.outcome === "success" ? "good" : "bad"}>{entry.outcome}{entry.status === null ? "" : ` ${entry.status}`}</Badge>
                },
                { header: "From", cell: (entry) => entry.address ?? "" }
              ]}
            />
            <nav className="pager" aria-label="Audit log pages">
              <button type="button" className="button secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                Newer
              </button>
              <button
                type="button"
                className="button secondary"
                disabled={entries.data.next === null}
                onClick={() => setCursors([...cursors, entries.data.next ?? undefined])}
              >
                Older
              </button>
            </nav>
          </>
        )}
      </Card>
    </Page>
  )
}
