/** The sign-in page, shown while authentication is on and this browser holds no admin session. */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { UiSession } from "../../../src/api/uiSession.ts"
import { api, basePath } from "../api.ts"
import { ErrorNotice, TextField } from "../components/ui.tsx"
import { sessionKey } from "../session.ts"

/** where single sign-on starts: back to this page of the UI once signed in */
const ssoStart = () => `${basePath}/v1/ui/oidc/start?return_to=${encodeURIComponent(window.location.pathname + window.location.search)}`

export const SignIn = ({ sso = false }: { readonly sso?: boolean | undefined }) => {
  const client = useQueryClient()
  const [key, setKey] = useState("")
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const session = await api<UiSession>("/v1/ui/session", { body: { api_key: key } })
      client.setQueryData(sessionKey, session)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main id="main" className="sign-in">
      <form onSubmit={submit} className="card" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to the gateway</h1>
        {sso && (
          <>
            <a className="button primary" href={ssoStart()}>Sign in with SSO</a>
            <p className="muted">Or with an API key:</p>
          </>
        )}
        <p className="muted">
          The UI needs an API key with the admin role: <code>gateway --create-api-key --admin</code>.
        </p>
        <TextField label="API key" type="password" value={key} onChange={setKey} placeholder="sk-gw-…" required />
        <ErrorNotice error={error} />
        <button type="submit" className={sso ? "button secondary" : "button primary"} disabled={busy || key.trim() === ""}>Sign in</button>
      </form>
    </main>
  )
}
