/** The reads the dataset pages share, cached under `datasetKeys`. */
import { useQuery } from "@tanstack/react-query"
import type { DatasetsList } from "../../../../src/api/uiDatasets.ts"
import { api } from "../../api.ts"
import { datasetKeys } from "./paths.ts"

/** `GET /v1/datasets`: every dataset with its counts */
export const useDatasets = () => useQuery({ queryKey: datasetKeys.all, queryFn: () => api<DatasetsList>("/v1/datasets") })
