/**
 * The Configuration page's in-page links. The page has a <base> (`<base_path>/ui/`), against which
 * a bare `#fragment` would resolve to another page: links carry the current path, so that the
 * browser scrolls (and moves focus) within the page.
 */
import { type ReactNode, useEffect } from "react"

/** an element id for `name` in a section (names may hold `::`, dots, any character): unique per name */
export const anchorOf = (section: string, name: string) =>
  `${section}-${name.replace(/[^A-Za-z0-9_-]/g, (character) => `_${character.codePointAt(0)!.toString(16)}`)}`

export const InPageLink = (props: { to: string; children: ReactNode }) => (
  <a href={`${window.location.pathname}${window.location.search}#${props.to}`}>{props.children}</a>
)

/** once the content is there: scrolls to the fragment the page was opened with (it was not rendered when the browser looked) */
export const useScrollToFragment = (ready: boolean) => {
  useEffect(() => {
    if (!ready || window.location.hash === "") return
    document.getElementById(decodeURIComponent(window.location.hash.slice(1)))?.scrollIntoView()
  }, [ready])
}

/** a section of the page: a card whose heading is an anchor's target */
export const Section = (props: { id: string; title: string; children: ReactNode }) => (
  <section className="card config-section" id={props.id} aria-labelledby={`${props.id}-title`}>
    <h2 className="card-title" id={`${props.id}-title`}>{props.title}</h2>
    {props.children}
  </section>
)
