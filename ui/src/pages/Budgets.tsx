/**
 * The budgets page: the workspace's budgets (`GET /v1/budgets`): those set at run time, with a
 * Delete button that asks for confirmation in place, and the configuration's (read-only); a form
 * to set one (`PUT /v1/budgets`: a second one of the same scope and period changes its limit).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { BudgetCondition, BudgetJson, BudgetList, SetBudgetRequest } from "../../../src/api/budgets.ts"
import { api } from "../api.ts"
import { Badge, Button, Card, ErrorNotice, formatTime, Loading, Page, SelectField, Success, Table, TextField } from "../components/ui.tsx"

const budgetsQueryKey = ["budgets"] as const

const scopeText = (condition: BudgetCondition) =>
  condition.kind === "tag" ? `tag ${condition.key}=${condition.value}` : condition.kind === "api_key" ? `API key ${condition.value}` : `workspace ${condition.value}`

const SetBudgetForm = () => {
  const client = useQueryClient()
  const [kind, setKind] = useState("workspace")
  const [key, setKey] = useState("")
  const [value, setValue] = useState("")
  const [period, setPeriod] = useState("month")
  const [limit, setLimit] = useState("")
  const set = useMutation({
    mutationFn: (body: SetBudgetRequest) => api<BudgetJson>("/v1/budgets", { method: "PUT", body }),
    onSuccess: () => void client.invalidateQueries({ queryKey: budgetsQueryKey })
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const scope = kind === "workspace" ? { kind } : kind === "api_key" ? { kind, value } : { kind, key, value }
    // the gateway checks the amount (a 400 names the field)
    set.mutate({ scope, period, limit: limit.trim() === "" ? Number.NaN : Number(limit) })
  }
  return (
    <>
      <form onSubmit={submit} aria-label="Set a budget">
        <div className="row">
          <SelectField
            label="Scope"
            value={kind}
            onChange={setKind}
            options={[{ value: "workspace", label: "the workspace" }, { value: "api_key", label: "an API key" }, { value: "tag", label: "a tag" }]}
          />
          {kind === "tag" && <TextField label="Tag key" value={key} onChange={setKey} required />}
          {kind !== "workspace" && (
            <TextField
              label={kind === "api_key" ? "Key's public id" : "Tag value"}
              value={value}
              onChange={setValue}
              required
              hint={kind === "tag" ? "gateway::each: each value its own budget" : undefined}
            />
          )}
          <SelectField label="Period" value={period} onChange={setPeriod} options={["day", "week", "month", "total"]} hint="calendar periods in UTC; a week from Monday" />
          <TextField label="Limit" value={limit} onChange={setLimit} type="number" required hint="in the providers' currency" />
        </div>
        <Button type="submit" kind="primary" disabled={set.isPending}>Set budget</Button>
      </form>
      <ErrorNotice error={set.error} />
      {set.data !== undefined && !set.isPending && <Success>Budget set: {set.data.scope.map(scopeText).join(", ")}, {set.data.limit} per {set.data.period}</Success>}
    </>
  )
}

const BudgetsTable = (props: { budgets: ReadonlyArray<BudgetJson> }) => {
  const client = useQueryClient()
  const [confirming, setConfirming] = useState<string | undefined>(undefined)
  const remove = useMutation({
    mutationFn: (id: string) => api<BudgetJson>(`/v1/budgets/${encodeURIComponent(id)}`, { method: "DELETE" }),
    onSuccess: () => {
      setConfirming(undefined)
      void client.invalidateQueries({ queryKey: budgetsQueryKey })
    }
  })
  const action = (budget: BudgetJson) => {
    if (budget.source === "config") return <span className="muted">in the configuration</span>
    const name = budget.scope.map(scopeText).join(", ")
    if (confirming !== budget.id) {
      return <Button kind="danger" label={`Delete the budget of ${name} per ${budget.period}`} onClick={() => setConfirming(budget.id)}>Delete</Button>
    }
    return (
      <div className="confirm" role="group" aria-label={`Confirm deleting the budget of ${name} per ${budget.period}`}>
        <span>Delete this budget?</span>
        <Button kind="danger" disabled={remove.isPending} onClick={() => remove.mutate(budget.id)}>Yes, delete</Button>
        <Button onClick={() => setConfirming(undefined)}>Cancel</Button>
      </div>
    )
  }
  return (
    <>
      <ErrorNotice error={remove.error} />
      <Table<BudgetJson>
        caption="Budgets"
        rows={props.budgets}
        rowKey={(budget) => budget.id}
        empty="No budgets in this workspace."
        columns={[
          { header: "Scope", cell: (budget) => budget.scope.map(scopeText).join(", ") || "every request" },
          { header: "Period", cell: (budget) => budget.period },
          { header: "Limit", numeric: true, cell: (budget) => budget.limit },
          { header: "Source", cell: (budget) => <Badge tone={budget.source === "config" ? "warn" : "good"}>{budget.source === "config" ? "configuration" : "run time"}</Badge> },
          { header: "Set", cell: (budget) => budget.updated_at === null ? "" : `${formatTime(budget.updated_at)}${budget.updated_by === null ? "" : ` by ${budget.updated_by}`}` },
          { header: "Actions", cell: action }
        ]}
      />
    </>
  )
}

export default function Budgets() {
  const budgets = useQuery({ queryKey: budgetsQueryKey, queryFn: () => api<BudgetList>("/v1/budgets") })
  return (
    <Page title="Budgets">
      <Card title="Set a budget">
        <SetBudgetForm />
      </Card>
      <Card title="Budgets">
        {budgets.isPending ? <Loading what="the budgets" /> : budgets.isError ? <ErrorNotice error={budgets.error} /> : <BudgetsTable budgets={budgets.data.budgets} />}
      </Card>
    </Page>
  )
}
