/** The endpoints of UiInferencesGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiInferences.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { UiEpisode, UiInferenceDetails, maxEpisodeInferences } from "../api/uiInferences.ts"

const EpisodePath = { episode_id: Schema.String.annotate({ description: "an episode id (UUIDv7)" }) }

const InferencePath = { inference_id: Schema.String.annotate({ description: "an inference id (UUIDv7)" }) }

export const UiInferencesGroup = HttpApiGroup.make("uiInferences")
  .add(
    HttpApiEndpoint.get("getUiInference", "/v1/ui/inferences/:inference_id", {
      params: InferencePath,
      success: UiInferenceDetails,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "One stored inference with its model calls (raw request and response) and its feedback",
      description: "400 when the id is not a UUIDv7, 404 when no inference has it."
    })),
    HttpApiEndpoint.get("getUiEpisode", "/v1/ui/episodes/:episode_id", {
      params: EpisodePath,
      success: UiEpisode,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "An episode's inferences in order, with their feedback and the episode's",
      description: `Its latest ${maxEpisodeInferences} inferences at most, oldest first. 400 when the id is not a UUIDv7, 404 when no inference is stored in the episode.`
    }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
