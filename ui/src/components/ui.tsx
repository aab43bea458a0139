/**
 * The UI's small design system: page frames, cards, tables, form fields, buttons, notices. Plain
 * elements with their native semantics (labels tied to inputs, tables with headers and captions),
 * so keyboards and screen readers work without extra wiring.
 */
import { type ReactNode, useId } from "react"
import { ApiError } from "../api.ts"

export const Page = (props: { title: string; actions?: ReactNode; children: ReactNode }) => (
  <section className="page" aria-labelledby="page-title">
    <header className="page-header">
      <h1 id="page-title">{props.title}</h1>
      {props.actions !== undefined && <div className="page-actions">{props.actions}</div>}
    </header>
    {props.children}
  </section>
)

export const Card = (props: { title?: string; children: ReactNode; className?: string }) => (
  <section className={`card ${props.className ?? ""}`}>
    {props.title !== undefined && <h2 className="card-title">{props.title}</h2>}
    {props.children}
  </section>
)

export interface Column<Row> {
  readonly header: string
  readonly cell: (row: Row) => ReactNode
  readonly numeric?: boolean
}

/** A table with a caption (read by screen readers, shown when `showCaption`) and an empty state. */
export const Table = <Row,>(props: {
  caption: string
  columns: ReadonlyArray<Column<Row>>
  rows: ReadonlyArray<Row>
  rowKey: (row: Row) => string
  empty?: string
  showCaption?: boolean
}) => (
  <div className="table-scroll" role="region" aria-label={props.caption} tabIndex={0}>
    <table>
      <caption className={props.showCaption === true ? "" : "visually-hidden"}>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th key={column.header} scope="col" className={column.numeric === true ? "numeric" : undefined}>{column.header}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0
          ? (
            <tr>
              <td colSpan={props.columns.length} className="empty">{props.empty ?? "Nothing here yet."}</td>
            </tr>
          )
          : props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td key={column.header} className={column.numeric === true ? "numeric" : undefined}>{column.cell(row)}</td>
              ))}
            </tr>
          ))}
      </tbody>
    </table>
  </div>
)

/** Previous and next page of a list paged by offset. */
export const Pager = (props: { offset: number; limit: number; count: number; onChange: (offset: number) => void; label?: string }) => (
  <nav className="pager" aria-label={props.label ?? "Pages"}>
    <button type="button" disabled={props.offset === 0} onClick={() => props.onChange(Math.max(0, props.offset - props.limit))}>
      Previous
    </button>
    <span aria-live="polite">
      {props.count === 0 ? "no rows" : `rows ${props.offset + 1}–${props.offset + props.count}`}
    </span>
    <button type="button" disabled={props.count < props.limit} onClick={() => props.onChange(props.offset + props.limit)}>
      Next
    </button>
  </nav>
)

/** A labelled field: `children` is given the id its label points at. */
export const Field = (props: { label: string; hint?: string; children: (id: string) => ReactNode; className?: string }) => {
  const id = useId()
  return (
    <div className={`field ${props.className ?? ""}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id)}
      {props.hint !== undefined && <small className="hint">{props.hint}</small>}
    </div>
  )
}

export const TextField = (props: {
  label: string
  value: string
  onChange: (value: string) => void
  hint?: string
  type?: string
  placeholder?: string
  required?: boolean
}) => (
  <Field label={props.label} hint={props.hint}>
    {(id) => (
      <input
        id={id}
        type={props.type ?? "text"}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        onChange={(event) => props.onChange(event.target.value)}
      />
    )}
  </Field>
)

export const TextArea = (props: { label: string; value: string; onChange: (value: string) => void; rows?: number; hint?: string; mono?: boolean }) => (
  <Field label={props.label} hint={props.hint}>
    {(id) => (
      <textarea
        id={id}
        rows={props.rows ?? 6}
        className={props.mono === true ? "mono" : undefined}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      />
    )}
  </Field>
)

export const SelectField = (props: {
  label: string
  value: string
  onChange: (value: string) => void
  options: ReadonlyArray<string | { value: string; label: string }>
  /** the label of an empty first option ("any"), when the field may be left empty */
  empty?: string
  hint?: string
}) => (
  <Field label={props.label} hint={props.hint}>
    {(id) => (
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.target.value)}>
        {props.empty !== undefined && <option value="">{props.empty}</option>}
        {props.options.map((option) => {
          const { value, label } = typeof option === "string" ? { value: option, label: option } : option
          return <option key={value} value={value}>{label}</option>
        })}
      </select>
    )}
  </Field>
)

export const CheckboxField = (props: { label: string; checked: boolean; onChange: (checked: boolean) => void }) => {
  const id = useId()
  return (
    <div className="field checkbox">
      <input id={id} type="checkbox" checked={props.checked} onChange={(event) => props.onChange(event.target.checked)} />
      <label htmlFor={id}>{props.label}</label>
    </div>
  )
}

export const Button = (props: {
  children: ReactNode
  onClick?: () => void
  type?: "button" | "submit"
  kind?: "primary" | "secondary" | "danger"
  disabled?: boolean
  label?: string
}) => (
  <button
    type={props.type ?? "button"}
    className={`button ${props.kind ?? "secondary"}`}
    onClick={props.onClick}
    disabled={props.disabled}
    aria-label={props.label}
  >
    {props.children}
  </button>
)

/** An error as the user should read it: the gateway's own message. */
export const ErrorNotice = (props: { error: unknown }) =>
  props.error === null || props.error === undefined ? null : (
    <p role="alert" className="notice error">
      {props.error instanceof ApiError ? `${props.error.status}: ${props.error.message}` : String((props.error as Error).message ?? props.error)}
    </p>
  )

export const Success = (props: { children: ReactNode }) => <p role="status" className="notice success">{props.children}</p>

export const Loading = (props: { what?: string }) => <p className="loading" role="status">Loading{props.what === undefined ? "" : ` ${props.what}`}…</p>

export const Badge = (props: { children: ReactNode; tone?: "good" | "bad" | "neutral" | "warn" }) => (
  <span className={`badge ${props.tone ?? "neutral"}`}>{props.children}</span>
)

/** A section folded away until opened (native <details>: keyboard and screen readers for free). */
export const Collapsible = (props: { summary: ReactNode; children: ReactNode; open?: boolean }) => (
  <details className="collapsible" open={props.open}>
    <summary>{props.summary}</summary>
    <div className="collapsible-body">{props.children}</div>
  </details>
)

/** Label/value pairs. */
export const Facts = (props: { facts: ReadonlyArray<readonly [string, ReactNode]> }) => (
  <dl className="facts">
    {props.facts.map(([term, value]) => (
      <div key={term}>
        <dt>{term}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)

export const formatTime = (iso: string | number | undefined | null) =>
  iso === undefined || iso === null ? "—" : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" })

export const formatNumber = (value: number | undefined | null, digits = 3) =>
  value === undefined || value === null || Number.isNaN(value) ? "—" : Number.isInteger(value) ? value.toLocaleString() : value.toFixed(digits)

export const shortId = (id: string) => `${id.slice(0, 8)}…${id.slice(-4)}`

/** Checkboxes under one legend: the chosen values, in the order they were checked. */
export const Checklist = (props: {
  legend: string
  items: ReadonlyArray<{ readonly value: string; readonly label: string }>
  chosen: ReadonlyArray<string>
  onChange: (chosen: ReadonlyArray<string>) => void
  /** said when there is nothing to choose */
  empty?: ReactNode
}) => (
  <fieldset>
    <legend>{props.legend}</legend>
    {props.items.length === 0 && props.empty !== undefined && <p className="muted">{props.empty}</p>}
    <div className="row">
      {props.items.map((item) => (
        <CheckboxField
          key={item.value}
          label={item.label}
          checked={props.chosen.includes(item.value)}
          onChange={(checked) => props.onChange(checked ? [...props.chosen, item.value] : props.chosen.filter((value) => value !== item.value))}
        />
      ))}
    </div>
  </fieldset>
)

/** An evaluator as a checklist item: its name, type and which way is better. */
export const evaluatorItem = (evaluator: { readonly name: string; readonly type: string; readonly optimize: string }) => ({
  value: evaluator.name,
  label: `${evaluator.name} (${evaluator.type}, ${evaluator.optimize})`
})
