/**
 * Where a provider finds its credential (`api_key_location`, or `credential_location` as
 * TensorZero writes it for GCP):
 * - `env::NAME`: an environment variable, read once at start-up;
 * - `dynamic::NAME`: the request's `credentials.NAME`;
 * - `path::FILE`: a file's content (a GCP service account's JSON), read at start-up;
 * - `path_from_env::NAME`: the file an environment variable names;
 * - `sdk`: the AWS credential chain of the environment (`AWS_BEARER_TOKEN_BEDROCK` when set,
 *   else `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`);
 * - `none`;
 * - `{ default = "...", fallback = "..." }`: the first, or the second when the first is not there.
 *
 * A credential is text to its provider: a key, a file's content, or (`sdk`) AWS keys as JSON
 * (`awsKeysCredential`). Its codec knows what to make of it.
 */
export type SingleLocation =
  | { readonly kind: "env"; readonly name: string }
  | { readonly kind: "dynamic"; readonly name: string }
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "path_from_env"; readonly name: string }
  | { readonly kind: "sdk" }
  | { readonly kind: "none" }

export type CredentialLocation =
  | SingleLocation
  | { readonly kind: "fallback"; readonly primary: SingleLocation; readonly fallback: SingleLocation }

/** A location resolved against the environment (and files) at start-up. */
export type Credential =
  | { readonly kind: "static"; readonly value: string }
  /** not there: `what` names what is missing ("environment variable X is not set") */
  | { readonly kind: "missing"; readonly what: string }
  | { readonly kind: "dynamic"; readonly name: string }
  | { readonly kind: "none" }
  /** `primary` when the request has it (a dynamic one), else `fallback` */
  | { readonly kind: "fallback"; readonly primary: Credential; readonly fallback: Credential }

/** `AWS_BEARER_TOKEN_BEDROCK` is a bearer key; the access keys come as this JSON, which `parseAwsKeys` reads back. */
export interface AwsKeys {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string | undefined
}

const awsKeysMarker = "aws-keys:"

export const awsKeysCredential = (keys: AwsKeys): string => `${awsKeysMarker}${JSON.stringify(keys)}`

/** the AWS keys a credential holds, or undefined for another credential (a bearer key) */
export const parseAwsKeys = (credential: string): AwsKeys | undefined => {
  if (!credential.startsWith(awsKeysMarker)) return undefined
  try {
    const keys = JSON.parse(credential.slice(awsKeysMarker.length))
    return typeof keys?.accessKeyId === "string" && typeof keys?.secretAccessKey === "string" ? keys : undefined
  } catch {
    return undefined
  }
}

export const locationSyntax = `"env::NAME", "dynamic::NAME", "path::FILE", "path_from_env::NAME", "sdk" or "none"`

export const parseSingleLocation = (text: string): SingleLocation | undefined => {
  if (text === "none") return { kind: "none" }
  if (text === "sdk") return { kind: "sdk" }
  const match = /^(env|dynamic|path|path_from_env)::(.+)$/.exec(text)
  if (match === null) return undefined
  const value = match[2]
  switch (match[1]) {
    case "path":
      return { kind: "path", path: value }
    case "env":
    case "dynamic":
    case "path_from_env":
      return { kind: match[1], name: value }
  }
  return undefined
}

/** A location as written: a string, or `{ default, fallback }`; a message saying what is wrong otherwise. */
export const parseCredentialLocation = (written: unknown): CredentialLocation | string => {
  if (typeof written === "string") return parseSingleLocation(written) ?? `expected ${locationSyntax}, got "${written}"`
  if (typeof written === "object" && written !== null && !Array.isArray(written)) {
    const table = written as Record<string, unknown>
    const extra = Object.keys(table).filter((key) => key !== "default" && key !== "fallback")
    if (extra.length > 0) return `unknown field "${extra[0]}" (expected default and fallback)`
    if (typeof table.default !== "string" || typeof table.fallback !== "string") {
      return `expected { default = "<location>", fallback = "<location>" }`
    }
    const primary = parseSingleLocation(table.default)
    if (primary === undefined) return `default: expected ${locationSyntax}, got "${table.default}"`
    const fallback = parseSingleLocation(table.fallback)
    if (fallback === undefined) return `fallback: expected ${locationSyntax}, got "${table.fallback}"`
    return { kind: "fallback", primary, fallback }
  }
  return `expected ${locationSyntax}, or { default, fallback }`
}

export type Environment = Readonly<Record<string, string | undefined>>

/** What resolution may read: the environment captured at start-up, and files (undefined when a file cannot be read). */
export interface CredentialSources {
  readonly env: Environment
  readonly readFile: (path: string) => string | undefined
}

const fromEnv = (env: Environment, name: string): string | undefined => {
  const value = env[name]
  return value === undefined || value === "" ? undefined : value
}

const notSet = (name: string): Credential => ({ kind: "missing", what: `environment variable ${name} is not set` })

const fromFile = (sources: CredentialSources, path: string, origin: string): Credential => {
  const content = sources.readFile(path)
  return content === undefined ? { kind: "missing", what: `file ${path}${origin} cannot be read` } : { kind: "static", value: content }
}

/** `sdk`: the AWS chain, from the environment (instance roles and profiles are not read: set the variables). */
const awsChain = (env: Environment): Credential => {
  const bearer = fromEnv(env, "AWS_BEARER_TOKEN_BEDROCK")
  if (bearer !== undefined) return { kind: "static", value: bearer }
  const accessKeyId = fromEnv(env, "AWS_ACCESS_KEY_ID")
  if (accessKeyId === undefined) return notSet("AWS_ACCESS_KEY_ID")
  const secretAccessKey = fromEnv(env, "AWS_SECRET_ACCESS_KEY")
  if (secretAccessKey === undefined) return notSet("AWS_SECRET_ACCESS_KEY")
  return { kind: "static", value: awsKeysCredential({ accessKeyId, secretAccessKey, sessionToken: fromEnv(env, "AWS_SESSION_TOKEN") }) }
}

const resolveSingle = (location: SingleLocation, sources: CredentialSources): Credential => {
  switch (location.kind) {
    case "env": {
      const value = fromEnv(sources.env, location.name)
      return value === undefined ? notSet(location.name) : { kind: "static", value }
    }
    case "path":
      return fromFile(sources, location.path, "")
    case "path_from_env": {
      const path = fromEnv(sources.env, location.name)
      return path === undefined ? notSet(location.name) : fromFile(sources, path, ` (from ${location.name})`)
    }
    case "sdk":
      return awsChain(sources.env)
    case "dynamic":
    case "none":
      return location
  }
}

export const resolveCredential = (location: CredentialLocation, sources: CredentialSources): Credential => {
  if (location.kind !== "fallback") return resolveSingle(location, sources)
  const primary = resolveSingle(location.primary, sources)
  const fallback = resolveSingle(location.fallback, sources)
  // a static primary always wins; a missing one leaves only the fallback
  if (primary.kind === "static" || primary.kind === "none") return primary
  if (primary.kind === "missing") return fallback
  return { kind: "fallback", primary, fallback }
}

/** What is missing of a credential whatever the request brings (start-up refuses it for positive-weight variants). */
export const missingAlways = (credential: Credential): string | undefined =>
  // a `fallback` credential keeps only a primary the request may bring (`resolveCredential`)
  credential.kind === "missing" ? credential.what : undefined
