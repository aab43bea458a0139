/**
 * Where a provider finds its API key: `env::NAME` (read once at start-up), `dynamic::NAME`
 * (taken from the request's `credentials`), or `none`.
 */
export type CredentialLocation =
  | { readonly kind: "env"; readonly name: string }
  | { readonly kind: "dynamic"; readonly name: string }
  | { readonly kind: "none" }

/** A location resolved against the environment captured at start-up. */
export type Credential =
  | { readonly kind: "static"; readonly value: string }
  | { readonly kind: "missing_env"; readonly name: string }
  | { readonly kind: "dynamic"; readonly name: string }
  | { readonly kind: "none" }

export const parseCredentialLocation = (text: string): CredentialLocation | undefined => {
  if (text === "none") return { kind: "none" }
  const match = /^(env|dynamic)::(.+)$/.exec(text)
  if (match === null) return undefined
  return { kind: match[1] as "env" | "dynamic", name: match[2] }
}

export const resolveCredential = (
  location: CredentialLocation,
  env: Readonly<Record<string, string | undefined>>
): Credential => {
  switch (location.kind) {
    case "env": {
      const value = env[location.name]
      return value === undefined || value === "" ? { kind: "missing_env", name: location.name } : { kind: "static", value }
    }
    case "dynamic":
      return location
    case "none":
      return location
  }
}
