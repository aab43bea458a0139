/**
 * The embedding model of a DICL variant: as the variant configures it (a configured
 * `[embedding_models.<name>]` or a short-hand `<provider_type>::<model>`), and as the embedding
 * service is asked for it.
 */
import type { GatewayConfig, VariantConfig } from "../config/types.ts"
import { embeddingModelPrefix } from "../api/embeddings.ts"

/** the variant's `embedding_model` when it is a DICL variant, else undefined */
export const diclEmbeddingModelOf = (variant: VariantConfig): string | undefined =>
  variant.type === "experimental_dynamic_in_context_learning" ? variant.embeddingModel : undefined

/** `name` as the embedding service's `model`: a configured model by its prefixed name, anything else as it is (a short-hand) */
export const embeddingModelRequestName = (config: GatewayConfig, name: string): string =>
  config.embeddingModels.has(name) ? `${embeddingModelPrefix}${name}` : name
