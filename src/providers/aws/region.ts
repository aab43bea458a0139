/** Where an AWS provider sends its calls: its `endpoint_url`, else the service's endpoint in its region. */
import type { Environment } from "../../config/credentials.ts"

/** the `region` setting, else `AWS_REGION`, else `AWS_DEFAULT_REGION` of the environment captured at start-up */
export const regionOf = (setting: string | undefined, env: Environment = {}): string | undefined => {
  if (setting !== undefined && setting !== "") return setting
  for (const name of ["AWS_REGION", "AWS_DEFAULT_REGION"]) {
    const value = env[name]
    if (value !== undefined && value !== "") return value
  }
  return undefined
}

/** `https://<host>.<region>.amazonaws.com`, or `endpoint_url` without its trailing slash; undefined without either */
export const endpointOf = (host: string, region: string | undefined, endpointUrl: string | undefined): string | undefined => {
  if (endpointUrl !== undefined) return endpointUrl.replace(/\/+$/, "")
  return region === undefined ? undefined : `https://${host}.${region}.amazonaws.com`
}

export const noRegion = (type: string) =>
  `the ${type} provider has no region: set region in its table, or AWS_REGION (or give endpoint_url)`
