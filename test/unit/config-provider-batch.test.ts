/**
 * `[provider_types.gcp_vertex_gemini.batch]` (TensorZero's names): the Cloud Storage locations
 * of Vertex AI batches, the default of every gcp_vertex_gemini provider's `batch` setting (a
 * provider table's own wins), checked at start-up with the key path of what is wrong; and a
 * provider without them, whose batches fail saying which table to set.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { vertexGeminiProvider } from "../../src/providers/gemini/index.ts"
import { qualifiedProviderName } from "../../src/providers/types.ts"
import { HttpTransport } from "../../src/transport.ts"
import { shorthandProviders } from "../../src/config/models.ts"
import { buildErrors, buildOk } from "./fixtures.ts"
import { hiRequest } from "../support/modelRequests.ts"

const typeBatch = (table: string) => `
[provider_types.gcp_vertex_gemini.batch]
${table}
`

const provider = (name: string, extra = "") => `
[models.${name}]
routing = ["p"]
[models.${name}.providers.p]
type = "gcp_vertex_gemini"
model_id = "gemini-2.5-flash"
project_id = "proj"
location = "us-central1"
credential_location = "none"
${extra}
`

const valid = `storage_type = "cloud_storage"
input_uri_prefix = "gs://team-bucket/batch/input/"
output_uri_prefix = "gs://team-bucket/batch/output/"`

const settingsOf = (toml: string, model: string) => buildOk(toml).models.get(model)!.providers.get("p")!.settings

describe("[provider_types.gcp_vertex_gemini.batch]", () => {
  it("is the batch setting of every gcp_vertex_gemini provider; a provider's own batch table wins", () => {
    const toml = typeBatch(valid) + provider("a") + provider("b", `batch = { storage_type = "cloud_storage", input_uri_prefix = "gs://other/in/", output_uri_prefix = "gs://other/out/" }`)
    expect(settingsOf(toml, "a").batch).toEqual({
      storage_type: "cloud_storage",
      input_uri_prefix: "gs://team-bucket/batch/input/",
      output_uri_prefix: "gs://team-bucket/batch/output/"
    })
    expect(settingsOf(toml, "b").batch).toMatchObject({ input_uri_prefix: "gs://other/in/" })
    expect(settingsOf(provider("c"), "c").batch).toBeUndefined()
  })

  it("is the batch setting of gcp_vertex_gemini short-hand models too", () => {
    const shorthand = "gcp_vertex_gemini::projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    const [configured] = shorthandProviders(shorthand, buildOk(typeBatch(valid)).shorthands)
    expect(configured.settings.batch).toMatchObject({ input_uri_prefix: "gs://team-bucket/batch/input/" })
    const [without] = shorthandProviders(shorthand, buildOk("").shorthands)
    expect(without.settings.batch).toBeUndefined()
  })

  it("an unknown storage_type, a location that is not gs://, a missing key: start-up errors naming the key path", () => {
    const errors = buildErrors(typeBatch(`storage_type = "s3"
input_uri_prefix = "s3://bucket/in/"`))
    expect(errors.some((error) => error.includes("provider_types.gcp_vertex_gemini.batch.storage_type") && error.includes("cloud_storage"))).toBe(true)
    expect(errors.some((error) => error.includes("provider_types.gcp_vertex_gemini.batch.input_uri_prefix") && error.includes("gs://"))).toBe(true)
    expect(errors.some((error) => error.includes("provider_types.gcp_vertex_gemini.batch.output_uri_prefix: missing field"))).toBe(true)
  })

  it("an unknown key, a provider's own batch table and a type without batch settings are checked too", () => {
    expect(buildErrors(typeBatch(`${valid}\nbucket = "x"`)).some((error) => error.includes("provider_types.gcp_vertex_gemini.batch.bucket"))).toBe(true)
    const own = buildErrors(provider("m", `batch = { storage_type = "cloud_storage", input_uri_prefix = "gs://b/in/", output_uri_prefix = "/tmp/out" }`))
    expect(own.some((error) => error.includes("models.m.providers.p.batch.output_uri_prefix"))).toBe(true)
    const other = buildErrors(`[provider_types.openai.batch]\n${valid}`)
    expect(other.some((error) => error.includes("provider_types.openai.batch: the openai provider type has no batch settings"))).toBe(true)
  })

  it("a provider without batch settings: its batch start fails as unsupported, naming the table to set, without a request", async () => {
    const config = buildOk(provider("m")).models.get("m")!.providers.get("p")!
    const request = hiRequest
    const call = { request, apiKey: undefined, extraBody: [], extraHeaders: [], modelName: "m", providerName: "p", qualifiedName: qualifiedProviderName("m", "p") }
    const transport = HttpTransport.of({
      post: () => Effect.die("no request expected"),
      postStream: () => Effect.die("no request expected"),
      download: () => Effect.die("no request expected")
    } as unknown as HttpTransport["Service"])
    const failure = await Effect.runPromise(
      Effect.flip(Effect.provideService(vertexGeminiProvider.make(config).batch!.start([{ id: "id-1", call }]), HttpTransport, transport))
    )
    expect(failure).toMatchObject({ unsupported: true })
    expect(failure.message).toContain("[provider_types.gcp_vertex_gemini.batch]")
  })
})
