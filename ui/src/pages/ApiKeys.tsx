/** The API keys page: the keys of the relational database, a form to create one, a button to disable one. */
import "../components/apiKeys/apiKeys.css"
import { CreateKeyForm } from "../components/apiKeys/CreateKeyForm.tsx"
import { useApiKeys } from "../components/apiKeys/keys.ts"
import { KeysTable } from "../components/apiKeys/KeysTable.tsx"
import { Card, ErrorNotice, Loading, Page } from "../components/ui.tsx"
import { useSession } from "../session.ts"

export default function ApiKeys() {
  const keys = useApiKeys()
  const session = useSession()
  return (
    <Page title="API keys">
      <Card title="Create a key">
        <CreateKeyForm />
      </Card>
      <Card title="Keys">
        {keys.isPending ? <Loading what="the keys" /> : keys.isError ? <ErrorNotice error={keys.error} /> : (
          <KeysTable keys={keys.data.api_keys} sessionKey={session.data?.public_id} />
        )}
      </Card>
    </Page>
  )
}
