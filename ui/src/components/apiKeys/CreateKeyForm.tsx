/**
 * Creates an API key (`POST /v1/ui/api_keys`) and shows it the one time it can be seen, in a
 * read-only field with a Copy button. The key lives only in this component's state: dismissing it
 * (or leaving the page) forgets it for good.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { CreatedUiApiKey, CreateUiApiKeyRequest } from "../../../../src/api/uiApiKeys.ts"
import { api } from "../../api.ts"
import { Button, CheckboxField, ErrorNotice, Field, Success, TextField } from "../ui.tsx"
import { apiKeysQueryKey } from "./keys.ts"

/** a `datetime-local` value (the browser's local time, no offset) as the RFC 3339 time the gateway takes */
const expirationOf = (local: string): string | undefined => {
  if (local === "") return undefined
  const time = new Date(local)
  return Number.isNaN(time.getTime()) ? local : time.toISOString()
}

export const CreateKeyForm = () => {
  const client = useQueryClient()
  const [expiration, setExpiration] = useState("")
  const [admin, setAdmin] = useState(false)
  const create = useMutation({
    mutationFn: (body: CreateUiApiKeyRequest) => api<CreatedUiApiKey>("/v1/ui/api_keys", { body }),
    onSuccess: () => {
      setExpiration("")
      setAdmin(false)
      void client.invalidateQueries({ queryKey: apiKeysQueryKey })
    }
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ expires_at: expirationOf(expiration), admin })
  }
  return (
    <>
      <form onSubmit={submit} aria-label="Create an API key">
        <div className="row">
          <TextField
            label="Expires at (your local time)"
            type="datetime-local"
            value={expiration}
            onChange={setExpiration}
            hint="empty: the key never expires"
          />
          <CheckboxField label="Admin role (may use this UI and manage keys)" checked={admin} onChange={setAdmin} />
        </div>
        <Button type="submit" kind="primary" disabled={create.isPending}>Create key</Button>
      </form>
      <ErrorNotice error={create.error} />
      {create.data !== undefined && <NewKey created={create.data} onDone={() => create.reset()} />}
    </>
  )
}

type CopyState = "idle" | "copied" | "failed"

const NewKey = (props: { created: CreatedUiApiKey; onDone: () => void }) => {
  const [copy, setCopy] = useState<CopyState>("idle")
  const copyKey = async () => {
    try {
      await navigator.clipboard.writeText(props.created.api_key)
      setCopy("copied")
    } catch {
      setCopy("failed")
    }
  }
  return (
    <div className="new-key" role="group" aria-labelledby="new-key-title">
      <h3 id="new-key-title">Key {props.created.public_id} created</h3>
      <p>Copy it now: the gateway keeps only a hash of its secret, and this page will not show it again.</p>
      <div className="row new-key-row">
        <Field label="New API key" className="new-key-field">
          {(id) => <input id={id} className="mono" readOnly value={props.created.api_key} onFocus={(event) => event.target.select()} />}
        </Field>
        <Button kind="primary" onClick={() => void copyKey()}>Copy</Button>
        <Button onClick={props.onDone}>Done</Button>
      </div>
      {copy === "copied" && <Success>Copied</Success>}
      {copy === "failed" && <p role="alert" className="notice error">The browser refused to copy: select the field and copy it by hand.</p>}
    </div>
  )
}
