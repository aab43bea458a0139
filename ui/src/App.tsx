/**
 * The application: a sign-in gate (with authentication on), the navigation, and one lazily loaded
 * module per page, so that a visit downloads only the pages it opens.
 */
import { useQueryClient } from "@tanstack/react-query"
import { lazy, type ReactNode, Suspense, useEffect } from "react"
import { createBrowserRouter, NavLink, Outlet, RouterProvider, useRouteError } from "react-router"
import { onSignedOut, uiBase } from "./api.ts"
import { ErrorNotice, Loading } from "./components/ui.tsx"
import { WorkspacePicker } from "./components/WorkspacePicker.tsx"
import { SignIn } from "./pages/SignIn.tsx"
import { sessionKey, useSession, useSignOut } from "./session.ts"

const page = (load: () => Promise<{ default: () => ReactNode }>) => {
  const Component = lazy(load)
  return (
    <Suspense fallback={<Loading />}>
      <Component />
    </Suspense>
  )
}

const sections: ReadonlyArray<{ path: string; label: string }> = [
  { path: "/", label: "Overview" },
  { path: "/inferences", label: "Inferences" },
  { path: "/datasets", label: "Datasets" },
  { path: "/evaluations", label: "Evaluations" },
  { path: "/optimization", label: "Optimization" },
  { path: "/playground", label: "Playground" },
  { path: "/configuration", label: "Configuration" },
  { path: "/api-keys", label: "API keys" },
  { path: "/audit", label: "Audit log" },
  { path: "/budgets", label: "Budgets" },
  { path: "/spend", label: "Spend" }
]

const Layout = () => {
  const session = useSession()
  const signOut = useSignOut()
  return (
    <div className="shell">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">LLM Gateway</span>
        <nav aria-label="Sections" className="sections">
          {sections.map((section) => (
            <NavLink key={section.path} to={section.path} end={section.path === "/"}>
              {section.label}
            </NavLink>
          ))}
        </nav>
        <div className="session">
          {session.data !== undefined && <WorkspacePicker session={session.data} />}
          {session.data?.authentication === false && <span className="badge warn" title="[gateway.auth] is off: anyone who reaches this page can use it">open: no authentication</span>}
          {session.data?.authentication === true && (
            <>
              <span className="muted">
                {session.data.identity === undefined ? `key ${session.data.public_id}` : `${session.data.identity} (${session.data.role})`}
              </span>
              <button type="button" className="button secondary" onClick={() => void signOut()}>Sign out</button>
            </>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  )
}

const RouteError = () => {
  const error = useRouteError()
  return <ErrorNotice error={error} />
}

const router = createBrowserRouter([
  {
    path: "/",
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: page(() => import("./pages/Overview.tsx")) },
      { path: "inferences", element: page(() => import("./pages/Inferences.tsx")) },
      { path: "inferences/:inferenceId", element: page(() => import("./pages/Inference.tsx")) },
      { path: "episodes/:episodeId", element: page(() => import("./pages/Episode.tsx")) },
      { path: "datasets", element: page(() => import("./pages/Datasets.tsx")) },
      { path: "datasets/:datasetName", element: page(() => import("./pages/Dataset.tsx")) },
      { path: "datasets/:datasetName/datapoints/:datapointId", element: page(() => import("./pages/Datapoint.tsx")) },
      { path: "evaluations", element: page(() => import("./pages/Evaluations.tsx")) },
      { path: "evaluations/runs/:runId", element: page(() => import("./pages/EvaluationRun.tsx")) },
      { path: "evaluations/workflow/:runId", element: page(() => import("./pages/WorkflowRun.tsx")) },
      { path: "optimization", element: page(() => import("./pages/Optimization.tsx")) },
      { path: "optimization/gepa/:taskId", element: page(() => import("./pages/GepaTask.tsx")) },
      { path: "playground", element: page(() => import("./pages/Playground.tsx")) },
      { path: "configuration", element: page(() => import("./pages/Configuration.tsx")) },
      { path: "api-keys", element: page(() => import("./pages/ApiKeys.tsx")) },
      { path: "audit", element: page(() => import("./pages/Audit.tsx")) },
      { path: "budgets", element: page(() => import("./pages/Budgets.tsx")) },
      { path: "spend", element: page(() => import("./pages/Spend.tsx")) },
      { path: "*", element: <p role="alert" className="notice error">No such page.</p> }
    ]
  }
], { basename: uiBase })

export const App = () => {
  const session = useSession()
  const client = useQueryClient()
  // a refused request (the key disabled, the role taken away) asks the session again
  useEffect(() => onSignedOut(() => void client.invalidateQueries({ queryKey: sessionKey })), [client])
  if (session.isPending) return <Loading what="the session" />
  if (session.isError) return <ErrorNotice error={session.error} />
  if (!session.data.signed_in) return <SignIn sso={session.data.oidc === true} />
  return <RouterProvider router={router} />
}
