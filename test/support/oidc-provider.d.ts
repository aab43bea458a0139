/**
 * The little of `oidc-provider` (a devDependency, shipped without types) that the single sign-on
 * tests use: a provider made from its issuer and configuration, served by `callback()`.
 */
declare module "oidc-provider" {
  import type { RequestListener } from "node:http"
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    callback(): RequestListener
  }
}
