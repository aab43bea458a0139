/**
 * Builds configurations for unit tests from TOML text and in-memory files, through the real
 * `buildConfig`. The TOML is always at `/cfg/gateway.toml`, so relative paths resolve against `/cfg`.
 */
import { buildConfig } from "../../src/config/build.ts"
import { gepaBuiltins } from "../../src/optimization/gepa/builtins.ts"
import { type FunctionConfig, type GatewayConfig, isSamplingVariant, type SingleCallVariant, type VariantConfig } from "../../src/config/types.ts"

export const configPath = "/cfg/gateway.toml"

export interface BuildOptions {
  /** absolute path -> text */
  readonly files?: Readonly<Record<string, string>>
  readonly env?: Readonly<Record<string, string | undefined>>
}

export const build = (toml: string, options: BuildOptions = {}) =>
  buildConfig({
    sources: [{ path: configPath, text: toml }],
    readFile: (absolutePath) => options.files?.[absolutePath],
    env: options.env ?? {},
    builtins: gepaBuiltins
  })

export const buildOk = (toml: string, options: BuildOptions = {}): GatewayConfig => {
  const result = build(toml, options)
  if ("errors" in result) throw new Error(`expected a valid configuration, got:\n${result.errors.join("\n")}`)
  return result.config
}

export const buildErrors = (toml: string, options: BuildOptions = {}): ReadonlyArray<string> => {
  const result = build(toml, options)
  if (!("errors" in result)) throw new Error("expected configuration errors, got a valid configuration")
  return result.errors
}

export const functionOf = (config: GatewayConfig, name: string): FunctionConfig => {
  const fn = config.functions.get(name)
  if (fn === undefined) throw new Error(`no function ${name}`)
  return fn
}

export const anyVariantOf = (config: GatewayConfig, functionName: string, variantName: string): VariantConfig => {
  const variant = functionOf(config, functionName).variants.get(variantName)
  if (variant === undefined) throw new Error(`no variant ${functionName}.${variantName}`)
  return variant
}

/** a variant that makes one model call (chat_completion, chain-of-thought, DICL) */
export const variantOf = (config: GatewayConfig, functionName: string, variantName: string): SingleCallVariant => {
  const variant = anyVariantOf(config, functionName, variantName)
  if (isSamplingVariant(variant)) throw new Error(`variant ${functionName}.${variantName} is of type ${variant.type}`)
  return variant
}

export const json = (value: unknown): string => JSON.stringify(value)
