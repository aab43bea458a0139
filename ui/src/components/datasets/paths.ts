/** The gateway's dataset routes and the UI's dataset pages, with names and ids escaped for a path. */

/** `/v1/datasets/<name>`: the prefix of a dataset's API routes */
export const datasetApi = (name: string) => `/v1/datasets/${encodeURIComponent(name)}`

/** the dataset's page in the UI */
export const datasetPage = (name: string) => `/datasets/${encodeURIComponent(name)}`

/** a datapoint version's page in the UI */
export const datapointPage = (datasetName: string, id: string) => `${datasetPage(datasetName)}/datapoints/${encodeURIComponent(id)}`

/** the UI's route of a datapoint's versions (src/api/uiDatasets.ts) */
export const historyApi = (datasetName: string, id: string) =>
  `/v1/ui/datasets/${encodeURIComponent(datasetName)}/datapoints/${encodeURIComponent(id)}/history`

/** the query keys of the dataset pages, so that a change refreshes what shows it */
export const datasetKeys = {
  all: ["datasets"] as const,
  datapoints: (name: string) => ["datasets", name, "datapoints"] as const,
  history: (name: string, id: string) => ["datasets", name, "history", id] as const
}
