/** A model (or embedding model) as loaded: its routing order and each provider, credentials shown by where they come from. */
import type { UiModel } from "../../../../src/api/uiConfig.ts"
import { JsonView } from "../JsonView.tsx"
import { Collapsible, Table } from "../ui.tsx"
import { anchorOf } from "./anchors.tsx"

type Provider = UiModel["providers"][number]

export const ModelView = (props: { model: UiModel; section: string }) => {
  const { model } = props
  const id = anchorOf(props.section, model.name)
  return (
    <article className="config-item" id={id} aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}><code>{model.name}</code></h3>
      <p>Routing: {model.routing.length === 0 ? "—" : model.routing.join(" → ")}</p>
      <Table<Provider>
        caption={`Providers of ${model.name}`}
        rows={model.providers}
        rowKey={(provider) => provider.name}
        columns={[
          { header: "Provider", cell: (provider) => provider.name },
          { header: "Type", cell: (provider) => provider.type },
          { header: "Model name", cell: (provider) => <code>{provider.model_name}</code> },
          { header: "Credential", cell: (provider) => provider.credential },
          {
            header: "Settings",
            cell: (provider) =>
              Object.keys(provider.settings).length === 0 ? "—" : (
                <Collapsible summary="Settings">
                  <JsonView value={provider.settings} label={`settings of provider ${provider.name} of ${model.name}`} />
                </Collapsible>
              )
          }
        ]}
      />
    </article>
  )
}
