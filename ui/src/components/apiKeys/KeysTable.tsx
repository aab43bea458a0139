/**
 * The API keys: public id (with who issued it, when TensorZero did, and its description), role, times and status, and for an active key a Disable button that
 * asks for confirmation in place (a key cannot be enabled again).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { UiApiKey } from "../../../../src/api/uiApiKeys.ts"
import { api } from "../../api.ts"
import { Badge, Button, ErrorNotice, formatTime, Table } from "../ui.tsx"
import { apiKeysQueryKey, type KeyStatus, statusOf } from "./keys.ts"

const tones: Record<KeyStatus, "good" | "bad" | "warn"> = { active: "good", disabled: "bad", expired: "warn" }

export const KeysTable = (props: { keys: ReadonlyArray<UiApiKey>; sessionKey: string | undefined }) => {
  const client = useQueryClient()
  const [confirming, setConfirming] = useState<string | undefined>(undefined)
  const disable = useMutation({
    mutationFn: (publicId: string) => api<UiApiKey>(`/v1/ui/api_keys/${encodeURIComponent(publicId)}/disable`, { method: "POST" }),
    onSuccess: () => {
      setConfirming(undefined)
      void client.invalidateQueries({ queryKey: apiKeysQueryKey })
    }
  })
  const now = Date.now()
  const action = (key: UiApiKey) => {
    if (statusOf(key, now) !== "active") return null
    const own = key.public_id === props.sessionKey
    if (confirming !== key.public_id) {
      return <Button kind="danger" label={`Disable key ${key.public_id}`} onClick={() => setConfirming(key.public_id)}>Disable</Button>
    }
    return (
      <div className="confirm" role="group" aria-label={`Confirm disabling key ${key.public_id}`}>
        <span>{own ? "This is your session's key: you will be signed out. Disable it for good?" : "Disable for good?"}</span>
        <Button kind="danger" disabled={disable.isPending} onClick={() => disable.mutate(key.public_id)}>Yes, disable {key.public_id}</Button>
        <Button onClick={() => setConfirming(undefined)}>Cancel</Button>
      </div>
    )
  }
  return (
    <>
      <ErrorNotice error={disable.error} />
      <Table<UiApiKey>
        caption="API keys, newest first"
        rows={props.keys}
        rowKey={(key) => key.public_id}
        empty="No API keys yet."
        columns={[
          {
            header: "Public id",
            cell: (key) => (
              <>
                <code>{key.public_id}</code>
                {key.public_id === props.sessionKey && <span className="muted"> (this session)</span>}
                {key.issuer === "tensorzero" && <> <Badge tone="neutral">from TensorZero</Badge></>}
                {key.description !== undefined && <div className="muted">{key.description}</div>}
              </>
            )
          },
          { header: "Role", cell: (key) => key.global ? <Badge tone="warn">global admin</Badge> : key.admin ? <Badge tone="warn">admin</Badge> : "API" },
          { header: "Created", cell: (key) => formatTime(key.created_at) },
          { header: "Expires", cell: (key) => key.expires_at === null ? "never" : formatTime(key.expires_at) },
          {
            header: "Status",
            cell: (key) => {
              const status = statusOf(key, now)
              return (
                <Badge tone={tones[status]}>
                  {status}
                  {status === "disabled" && ` ${formatTime(key.disabled_at)}`}
                </Badge>
              )
            }
          },
          { header: "Actions", cell: action }
        ]}
      />
    </>
  )
}
