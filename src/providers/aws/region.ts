/** Where an AWS provider sends its calls: its `endpoint_url`, else the service's endpoint in its region. */
import type { Environment } from "../../config/credentials.ts"
import * as Result from "effect/Result"
import { awsRegion, httpsUrl, nameProblem, urlUnder } from "../urls.ts"

/** the `region` setting, else `AWS_REGION`, else `AWS_DEFAULT_REGION` of the environment captured at start-up */
export const regionOf = (setting: string | undefined, env: Environment = {}): string | undefined => {
  if (setting !== undefined && setting !== "") return setting
  for (const name of ["AWS_REGION", "AWS_DEFAULT_REGION"]) {
    const value = env[name]
    if (value !== undefined && value !== "") return value
  }
  return undefined
}

/** why `region` cannot be part of a host name (a setting, or AWS_REGION, that is no region), or undefined */
const regionProblem = (region: string | undefined): string | undefined =>
  region === undefined ? undefined : nameProblem("region (the setting, or AWS_REGION or AWS_DEFAULT_REGION)", region, awsRegion)

/**
 * `https://<host>.<region>.amazonaws.com` (the region checked, the host built and checked), or
 * `endpoint_url` without its trailing slash; undefined without either, or with a region that
 * is no region.
 */
export const endpointOf = (host: string, region: string | undefined, endpointUrl: string | undefined): string | undefined => {
  if (endpointUrl !== undefined) return endpointUrl.replace(/\/+$/, "")
  if (region === undefined || regionProblem(region) !== undefined) return undefined
  const url = httpsUrl(`${host}.${region}.amazonaws.com`, "/")
  return Result.isFailure(url) ? undefined : url.success.slice(0, -1)
}

export const noRegion = (type: string) =>
  `the ${type} provider has no region: set region in its table, or AWS_REGION (or give endpoint_url)`

/**
 * Why an AWS provider can make no call: no endpoint (no region, or one that is no region), or
 * a resource (`model_id`, `endpoint_name`) that is no path segment once encoded (`..`). Checked
 * once, at start-up; calls concatenate the same parts afterwards.
 */
export const addressProblem = (
  type: string,
  target: { readonly region: string | undefined; readonly endpoint: string | undefined },
  resource: { readonly setting: string; readonly segments: ReadonlyArray<string> }
): string | undefined => {
  if (target.endpoint === undefined) return regionProblem(target.region) ?? noRegion(type)
  const url = urlUnder(`${target.endpoint}/`, resource.segments)
  return Result.isFailure(url) ? `${resource.setting}: ${url.failure.message}` : undefined
}
