// The web UI's build: dist/ui, served by the gateway at <base_path>/ui (layers/http/uiAssets.ts).
// Relative asset URLs resolve against the <base> element the gateway writes into the page, so one
// build serves any base path.
import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    outDir: "../dist/ui",
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 400,
    sourcemap: false
  }
})
