/**
 * `/v1/ui/api_keys`: the API keys of the relational database, for the UI's API keys page: list
 * them, create one (its whole text answered this once: only the hash of its secret is kept), and
 * disable one, each in the caller's workspace (the key made is in it; another workspace's key is
 * no key here), and list the workspaces (global admins only). The use case is src/auth/keyAdministration.ts, which the command line shares.
 * Without a relational database there are no keys to manage: a 503 says so.
 */
import * as Schema from "effect/Schema"

const Time = Schema.String.annotate({ description: "an RFC 3339 time, UTC", format: "date-time" })

const apiKeyFields = {
  public_id: Schema.String.annotate({
    description: "the 12 characters after `sk-gw-` (`sk-t0-` for a key imported from TensorZero, mixed-case): the key's name, not a secret"
  }),
  created_at: Time,
  /** null: the key never expires */
  expires_at: Schema.NullOr(Time),
  /** null: the key is not disabled */
  disabled_at: Schema.NullOr(Time),
  admin: Schema.Boolean.annotate({ description: "the admin role: the UI and its routes, in the key's workspace" }),
  workspace: Schema.String.annotate({ description: "the workspace the key belongs to" }),
  global: Schema.Boolean.annotate({ description: "a global admin: acts on any workspace (named by the `gateway-workspace` header)" }),
  issuer: Schema.optional(Schema.Literals(["gateway", "tensorzero"]).annotate({
    description: "who issued the key: `gateway` (an `sk-gw-` key) or `tensorzero` (an `sk-t0-` key, imported)"
  })),
  description: Schema.optional(Schema.String.annotate({ description: "what the key is for, as TensorZero described it" }))
}

export const UiApiKey = Schema.Struct(apiKeyFields).annotate({ identifier: "UiApiKey" })
export type UiApiKey = typeof UiApiKey.Type

export const UiApiKeyList = Schema.Struct({
  /** newest first */
  api_keys: Schema.Array(UiApiKey)
}).annotate({ identifier: "UiApiKeyList" })
export type UiApiKeyList = typeof UiApiKeyList.Type

export const CreateUiApiKeyRequest = Schema.Struct({
  expires_at: Schema.optional(Schema.String.annotate({
    description: "when the key stops working: an RFC 3339 time with its offset, in the future (none: it never expires)"
  })),
  admin: Schema.optional(Schema.Boolean.annotate({ description: "give the key the admin role of its workspace (default false)" })),
  global: Schema.optional(Schema.Boolean.annotate({
    description: "make a global admin (default false): only a global admin may; the key is then an admin too"
  }))
}).annotate({ identifier: "CreateUiApiKeyRequest" })
export type CreateUiApiKeyRequest = typeof CreateUiApiKeyRequest.Type

export const CreatedUiApiKey = Schema.Struct({
  api_key: Schema.String.annotate({ description: "the whole key, `sk-gw-<public id>-<secret>`: shown this once, never again" }),
  ...apiKeyFields
}).annotate({ identifier: "CreatedUiApiKey" })
export type CreatedUiApiKey = typeof CreatedUiApiKey.Type

export const UiWorkspaceList = Schema.Struct({
  /** sorted; `default` always among them */
  workspaces: Schema.Array(Schema.String)
}).annotate({ identifier: "UiWorkspaceList" })
export type UiWorkspaceList = typeof UiWorkspaceList.Type
