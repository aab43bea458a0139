/**
 * A GCP service account key file (the JSON Google issues) for tests and fakes: the gateway signs
 * its token requests with `privateKey`, the test or fake verifies them with the public half.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto"

export interface ServiceAccountFields {
  readonly projectId: string
  readonly keyId: string
  readonly clientEmail: string
  readonly tokenUri: string
  readonly clientId?: string
}

/** a fresh RSA key pair, as a service account's */
export const serviceAccountKeys = () => generateKeyPairSync("rsa", { modulusLength: 2048 })

/** the key file of `fields` whose private key is `privateKey` */
export const serviceAccountJson = (privateKey: KeyObject, fields: ServiceAccountFields): string =>
  JSON.stringify({
    type: "service_account",
    project_id: fields.projectId,
    private_key_id: fields.keyId,
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: fields.clientEmail,
    ...(fields.clientId === undefined ? {} : { client_id: fields.clientId }),
    token_uri: fields.tokenUri
  })
