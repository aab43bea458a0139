import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"
import "./styles.css"

const queries = new QueryClient({
  defaultOptions: {
    // the gateway's refusals (4xx) are answers, not outages: asking again would not change them
    queries: { retry: (failures, error) => failures < 2 && !((error as { status?: number }).status! < 500), refetchOnWindowFocus: false, staleTime: 5_000 }
  }
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <App />
    </QueryClientProvider>
  </StrictMode>
)
