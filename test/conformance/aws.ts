/**
 * Conformance subjects of `aws_bedrock` (Converse/ConverseStream) and `aws_sagemaker` (an
 * OpenAI-compatible container behind InvokeEndpoint), each against its own fake AWS
 * (test/support/fakeBedrock.ts), which verifies the SigV4 signature against the secret.
 */
import type { ConformanceSubject } from "../support/conformance.ts"
import { fakeAwsIdentity, startFakeBedrock } from "../support/fakeBedrock.ts"

/** the AWS chain (`sdk`) of the gateway's environment: these keys, and no bearer key or session token that could be set around the tests */
const awsEnv = {
  AWS_ACCESS_KEY_ID: fakeAwsIdentity.accessKeyId,
  AWS_SECRET_ACCESS_KEY: fakeAwsIdentity.secretAccessKey,
  AWS_BEARER_TOKEN_BEDROCK: "",
  AWS_SESSION_TOKEN: ""
}

export const subjects: ReadonlyArray<ConformanceSubject> = [
  {
    type: "aws_bedrock",
    start: async () => {
      const fake = await startFakeBedrock()
      return {
        providerTable: {
          type: "aws_bedrock",
          model_id: "us.anthropic.claude-sonnet-4-20250514-v1:0",
          region: fakeAwsIdentity.region,
          endpoint_url: fake.url,
          api_key_location: "sdk"
        },
        env: awsEnv,
        received: () => fake.requests.map((request) => request.body),
        close: () => fake.close()
      }
    }
  },
  {
    type: "aws_sagemaker",
    start: async () => {
      const fake = await startFakeBedrock()
      return {
        providerTable: {
          type: "aws_sagemaker",
          endpoint_name: "conformance-endpoint",
          hosted_provider: "openai",
          model_name: "container-model",
          region: fakeAwsIdentity.region,
          endpoint_url: fake.url,
          api_key_location: "sdk"
        },
        env: awsEnv,
        received: () => fake.requests.map((request) => request.body),
        close: () => fake.close()
      }
    }
  }
]
