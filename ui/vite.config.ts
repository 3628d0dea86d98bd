// Vite builds the UI into dist/ (served by `keiri serve --ui-dir ui/dist` and embedded by the
// Tauri shell); Vitest runs the unit tests in jsdom. The tests live beside the code they test
// (`src/**/*.test.ts[x]`); nothing the app imports reaches them, so the build leaves them out.
//
// In `npm run dev` the browser has no Tauri IPC, so /api is proxied to a running
// `keiri serve` (KEIRI_API_URL, default http://127.0.0.1:8710).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      // `keiri serve` answers only to its own Host, so the proxy must rewrite it.
      '/api': { target: process.env.KEIRI_API_URL ?? 'http://127.0.0.1:8710', changeOrigin: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // WebKitGTK (Tauri on Linux) and current Chromium both handle ES2022.
    target: 'es2022',
    chunkSizeWarningLimit: 1024,
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
  },
});
