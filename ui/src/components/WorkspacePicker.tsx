/**
 * The workspace a global admin's UI acts on (../workspace.ts): the workspaces that have keys, and
 * any other name typed in (a new workspace has no keys yet). Shown to global admins only; a
 * workspace admin's workspace is shown as text.
 */
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { UiWorkspaceList } from "../../../src/api/uiApiKeys.ts"
import type { UiSession } from "../../../src/api/uiSession.ts"
import { api } from "../api.ts"
import { pickedWorkspace, pickWorkspace } from "../workspace.ts"

export const WorkspacePicker = (props: { session: UiSession }) => {
  const global = props.session.role === "global"
  const workspaces = useQuery({
    queryKey: ["ui-workspaces"],
    queryFn: () => api<UiWorkspaceList>("/v1/ui/workspaces"),
    enabled: global,
    staleTime: 60_000
  })
  const current = global ? pickedWorkspace() ?? "default" : props.session.workspace ?? "default"
  const [typed, setTyped] = useState(current)
  if (!global) return <span className="muted" data-testid="workspace">workspace {current}</span>
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const name = typed.trim()
    if (name !== "" && name !== current) pickWorkspace(name === "default" ? undefined : name)
  }
  return (
    <form className="workspace-picker" onSubmit={submit}>
      <label htmlFor="workspace-picker">Workspace</label>
      <input
        id="workspace-picker"
        list="workspace-names"
        value={typed}
        onChange={(event) => setTyped(event.target.value)}
        maxLength={64}
        pattern="[A-Za-z0-9_.\-]{1,64}"
        title="1 to 64 letters, digits, _, - and ."
      />
      <datalist id="workspace-names">
        {(workspaces.data?.workspaces ?? [current]).map((name) => <option key={name} value={name} />)}
      </datalist>
      <button type="submit" className="button secondary" disabled={typed.trim() === current}>Switch</button>
    </form>
  )
}
