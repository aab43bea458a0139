/**
 * A destructive action asked twice, in place: the first press shows "Are you sure?" with the
 * confirming button (focused, so a keyboard user goes on from there) and Cancel (which gives
 * the focus back). Not window.confirm: it stays styled, testable and readable by screen readers.
 */
import { useEffect, useRef, useState } from "react"
import { Button } from "../ui.tsx"

export const ConfirmButton = (props: {
  /** the first button's text */
  label: string
  /** its accessible name, when the text alone is ambiguous (one per table row) */
  accessibleLabel?: string
  /** what the confirmation says will happen */
  question: string
  /** the confirming button's text */
  confirm: string
  onConfirm: () => void
  busy?: boolean
}) => {
  const [asking, setAsking] = useState(false)
  const confirmRef = useRef<HTMLSpanElement>(null)
  const startRef = useRef<HTMLSpanElement>(null)
  const asked = useRef(false)
  useEffect(() => {
    if (asking) confirmRef.current?.querySelector("button")?.focus()
    else if (asked.current) startRef.current?.querySelector("button")?.focus()
    asked.current = asking
  }, [asking])
  if (!asking) {
    return (
      <span ref={startRef}>
        <Button kind="danger" label={props.accessibleLabel} onClick={() => setAsking(true)} disabled={props.busy}>{props.label}</Button>
      </span>
    )
  }
  return (
    <span className="confirm" role="group" aria-label={props.question} ref={confirmRef}>
      <span className="confirm-question">{props.question}</span>
      <Button kind="danger" onClick={() => {
        asked.current = false
        setAsking(false)
        props.onConfirm()
      }}>{props.confirm}</Button>
      <Button onClick={() => setAsking(false)}>Cancel</Button>
    </span>
  )
}
