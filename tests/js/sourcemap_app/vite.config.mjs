// Vite with @sentry/vite-plugin, which injects debug ids and uploads the source maps
// while it builds (tests/processors/test_symbolicate_browser.py sets SENTRY_URL,
// SENTRY_AUTH_TOKEN, SENTRY_ORG and SENTRY_PROJECT, as a team's CI does).
import { defineConfig } from "vite";
import { sentryVitePlugin } from "@sentry/vite-plugin";

export default defineConfig({
  base: "./",
  build: { sourcemap: true, outDir: process.env.OUT_DIR, emptyOutDir: true },
  plugins: [sentryVitePlugin({ telemetry: false })],
});
