/**
 * TensorZero's reserved names, as this gateway spells them: `tensorzero::` becomes `gateway::`
 * (the rename docs/moving-from-tensorzero.md asks of a configuration), in tag keys, function
 * names (`tensorzero::llm_judge::<evaluation>::<evaluator>`) and metric names
 * (`tensorzero::evaluation_name::<evaluation>::evaluator_name::<evaluator>`). Tag values are the
 * caller's and stay as they are.
 */

const tensorzeroPrefix = "tensorzero::"
const gatewayPrefix = "gateway::"

/**
 * TensorZero's older names of reserved tags, by their name here: a workflow evaluation was a
 * "dynamic evaluation" first, and TensorZero went on writing both tags.
 */
const renamedTags: Readonly<Record<string, string>> = {
  "tensorzero::dynamic_evaluation_run_id": "gateway::workflow_evaluation_run_id",
  "tensorzero::dynamic_evaluation_run_episode_id": "gateway::workflow_evaluation_run_episode_id"
}

/** `name` with a leading `tensorzero::` spelled `gateway::` */
export const gatewayName = (name: string): string =>
  name.startsWith(tensorzeroPrefix) ? gatewayPrefix + name.slice(tensorzeroPrefix.length) : name

/** tags with their reserved keys renamed; when TensorZero wrote a key under both its names, the newer name's value wins */
export const gatewayTags = (tags: Readonly<Record<string, string>>): Record<string, string> => {
  const renamed: Record<string, string> = {}
  for (const [key, value] of Object.entries(tags)) {
    const older = renamedTags[key]
    if (older !== undefined) {
      if (!(older in renamed)) renamed[older] = value
    } else {
      renamed[gatewayName(key)] = value
    }
  }
  return renamed
}
