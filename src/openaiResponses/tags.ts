/** The tags the Responses surface sets on its inferences (issue 37, design 4): the stored ones are told by them. */

/** the surface's value of `gateway::surface` */
export const responsesSurface = "openai_responses"
/** set on a stored response: the Responses routes see only inferences with it */
export const responseStoreTag = "gateway::response_store"
/** the request's `model` as sent, which a stored response echoes */
export const responseModelTag = "gateway::response_model"
/** the response a stored one continued */
export const previousResponseTag = "gateway::previous_response_id"
