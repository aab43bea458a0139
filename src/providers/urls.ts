/**
 * Provider URLs built from names: parts of a model name (a short-hand's comes from a request),
 * settings, and ids a provider put in its answers (batch jobs, files) and the gateway puts back
 * into a URL. A name is checked against its pattern before use, and the URL is built with
 * `new URL` and checked to be exactly what was meant: the expected host or the base's origin,
 * the base's path followed by the segments (nothing normalised away by a `..`), and no query or
 * fragment but the caller's own. This is what keeps a model name such as
 * `projects/p/locations/127.0.0.1:8080#/...` from sending a call, and the credential it
 * carries, anywhere but the provider (issue 33).
 *
 * Every codec that builds a URL from a name uses these; built once per configured provider or
 * short-hand (its `target`), or once per batch exchange, never per streamed chunk.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { quoted } from "../untrusted.ts"

/** What a name must look like, and how a message calls it. */
export interface NamePattern {
  readonly pattern: RegExp
  /** "a GCP location (lower-case letters, digits and hyphens, as us-central1 or global)" */
  readonly what: string
}

/**
 * A GCP location (`us-central1`, `europe-west4`, `global`, `us`): it becomes part of a host
 * name (`<location>-aiplatform.googleapis.com`), so a DNS label and nothing else.
 */
export const gcpLocation: NamePattern = {
  pattern: /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
  what: "a GCP location (lower-case letters, digits and hyphens, as us-central1 or global)"
}

/**
 * A GCP project: its id (`my-project-123`: lower-case letters, digits, hyphens), its number
 * (`123456789012`), or a legacy domain-scoped id (`example.com:my-project`). Laxer on length
 * than Google (6 to 30 characters), as TensorZero checks none.
 */
export const gcpProject: NamePattern = {
  pattern: /^(?:[a-z0-9][a-z0-9.-]{0,62}:)?[a-z0-9][a-z0-9-]{0,62}$/,
  what: "a GCP project id or number (lower-case letters, digits and hyphens, as my-project-123)"
}

/**
 * A model id as providers put it in a URL path (`gemini-2.5-pro`, `claude-3-5-sonnet@20240620`,
 * `gemini-1.5-pro-002`, `gemma-3-27b-it`), or a Vertex endpoint id (`1234567890`, `my-endpoint`):
 * one path segment.
 */
export const modelId: NamePattern = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._@-]{0,255}$/,
  what: "a model id (letters, digits, '.', '_', '@' and '-', as gemini-2.5-pro or claude-3-5-sonnet@20240620)"
}

export const endpointId: NamePattern = {
  pattern: modelId.pattern,
  what: "an endpoint id (letters, digits, '.', '_', '@' and '-', as 1234567890)"
}

/** An AWS region (`us-east-1`, `us-gov-west-1`): part of the host name (`bedrock-runtime.<region>.amazonaws.com`). */
export const awsRegion: NamePattern = {
  pattern: /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
  what: "an AWS region (lower-case letters, digits and hyphens, as us-east-1)"
}

/** A SageMaker endpoint name, as AWS defines it (`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}`). */
export const sageMakerEndpoint: NamePattern = {
  pattern: /^[a-zA-Z0-9](?:-*[a-zA-Z0-9]){0,62}$/,
  what: "a SageMaker endpoint name (letters, digits and hyphens)"
}

/**
 * The id a provider gives one of its objects and the gateway puts back into a URL: OpenAI's
 * `batch_abc123` and `file-abc123`, Anthropic's `msgbatch_...`, a Gemini batch's or a Vertex
 * job's last segment.
 */
export const providerObjectId: NamePattern = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$/,
  what: "a provider object id (letters, digits, '.', '_' and '-')"
}

/** A Cloud Storage bucket name (cloud.google.com/storage/docs/buckets#naming). */
export const gcsBucket: NamePattern = {
  pattern: /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/,
  what: "a Cloud Storage bucket name (lower-case letters, digits, '.', '_' and '-')"
}

/** `<field> "<value>" is not <what>`, or undefined when `value` matches. */
export const nameProblem = (field: string, value: string, name: NamePattern): string | undefined =>
  name.pattern.test(value) ? undefined : `${field} ${quoted(value)} is not ${name.what}`

/** A settings field holding such a name: a configuration with another value fails at start-up naming the key. */
export const namedString = (name: NamePattern) =>
  Schema.String.check(Schema.makeFilter((value: string) => name.pattern.test(value) ? undefined : `${quoted(value)} is not ${name.what}`))

/** Why a provider URL could not be built: a value, not a throw. */
export class UrlProblem {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const parse = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const isHttp = (url: URL) => url.protocol === "http:" || url.protocol === "https:"

/**
 * Why `url` cannot be the base URL of a provider (`api_base`, `endpoint`, `endpoint_url`,
 * `gateway_url`): it must be an absolute http:// or https:// URL without a query or fragment
 * (the gateway appends paths to it, and a query or fragment would swallow them).
 */
export const baseUrlProblem = (url: string): string | undefined => {
  const parsed = parse(url)
  if (parsed === undefined || !isHttp(parsed)) return `expected an http:// or https:// URL, got ${quoted(url, 200)}`
  if (parsed.search !== "" || parsed.hash !== "" || url.includes("?") || url.includes("#")) {
    return `expected a base URL without a query or fragment, got ${quoted(url, 200)}`
  }
  return undefined
}

/** A settings field holding a base URL: a configuration with another value fails at start-up naming the key. */
export const BaseUrl = Schema.String.check(Schema.makeFilter((url: string) => baseUrlProblem(url)))

/**
 * `https://<host><path>`, checked to have exactly that host and path: for a host made from a
 * name (`<location>-aiplatform.googleapis.com`), after the name was checked against its pattern.
 */
export const httpsUrl = (host: string, path = "/"): Result.Result<string, UrlProblem> => {
  const url = parse(`https://${host}${path}`)
  if (
    url === undefined || url.hostname !== host || url.port !== "" || url.username !== "" || url.password !== "" ||
    url.pathname !== path || url.search !== "" || url.hash !== ""
  ) {
    return Result.fail(new UrlProblem(`${quoted(host)} is not a host name`))
  }
  return Result.succeed(url.href)
}

/** one path segment as RFC 3986 writes it (`pchar`), percent-encodings included */
const segmentChars = /^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+$/
/** `.` and `..`, written plainly or percent-encoded, which `new URL` removes with what precedes them */
const dotSegment = /^(?:\.|%2e){1,2}$/i

/**
 * `base` followed by `segments` (each exactly one path segment: check names against their
 * pattern, or encode them with `encodeURIComponent`, before) and a `suffix` of the caller's own
 * (`:generateContent`, `:streamGenerateContent?alt=sse`, `?alt=media`), built with `new URL` and
 * checked: the origin is the base's, the path is exactly the base's followed by the segments
 * and the suffix's path, and the query is the suffix's only, with no fragment.
 */
export const urlUnder = (base: string, segments: ReadonlyArray<string>, suffix = ""): Result.Result<string, UrlProblem> => {
  const root = parse(base)
  if (root === undefined || !isHttp(root) || root.search !== "" || root.hash !== "") {
    return Result.fail(new UrlProblem(`${quoted(base, 200)} is not a base URL (http:// or https://, without a query or fragment)`))
  }
  for (const segment of segments) {
    if (!segmentChars.test(segment) || dotSegment.test(segment)) return Result.fail(new UrlProblem(`${quoted(segment)} is not one path segment`))
  }
  const rootPath = root.pathname.endsWith("/") ? root.pathname : `${root.pathname}/`
  const query = suffix.indexOf("?")
  const suffixPath = query === -1 ? suffix : suffix.slice(0, query)
  const suffixQuery = query === -1 ? "" : suffix.slice(query)
  const path = `${rootPath}${segments.join("/")}${suffixPath}`
  const url = parse(`${root.origin}${path}${suffixQuery}`)
  // the query as `new URL` writes it (it encodes a few characters encodeURIComponent leaves, as ')
  const expectedQuery = suffixQuery === "" ? "" : parse(`${root.origin}/${suffixQuery}`)?.search
  if (url === undefined || url.origin !== root.origin || url.pathname !== path || url.search !== expectedQuery || url.hash !== "") {
    return Result.fail(new UrlProblem(`the URL made of ${quoted(base, 200)} and ${quoted(segments.join("/"), 200)} leaves its base`))
  }
  return Result.succeed(url.href)
}
