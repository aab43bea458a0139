/**
 * The workspace the UI acts on (docs/api-keys.md#workspaces): a workspace admin's is its key's, and
 * the gateway decides it; a global admin (or anyone, without authentication) picks one, kept in
 * this browser's storage and sent with every request as the `gateway-workspace` header. The
 * choice outlives a sign-out, not a different browser.
 */
const storageKey = "gateway_ui_workspace"
export const workspaceHeader = "gateway-workspace"

/** the workspace picked in this browser, or undefined (the gateway's default for the key) */
export const pickedWorkspace = (): string | undefined => {
  try {
    return localStorage.getItem(storageKey) ?? undefined
  } catch {
    return undefined
  }
}

/** picks `workspace` (undefined: back to the key's default) and reloads, so that nothing read in another workspace stays on screen */
export const pickWorkspace = (workspace: string | undefined) => {
  if (workspace === undefined) localStorage.removeItem(storageKey)
  else localStorage.setItem(storageKey, workspace)
  window.location.reload()
}
