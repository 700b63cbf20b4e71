import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// Built into dist/ and served by Django (WhiteNoise) under /static/ui/; nothing from a CDN.
export default defineConfig({
  base: "/static/ui/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 2000 },
  server: {
    // `npm run dev` proxies the API to a running `make run` (port 8000).
    proxy: { "/api": "http://127.0.0.1:8000", "/admin": "http://127.0.0.1:8000" },
  },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
