// The console's production build: hashed files under dist/assets, which the gateway serves at `/`
// (services/gateway/src/console-files.ts) under a CSP that allows no inline script or style, so nothing
// may be inlined: no module-preload polyfill (a browser without modulepreload still loads the modules),
// no assets turned into data: URLs.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
});
