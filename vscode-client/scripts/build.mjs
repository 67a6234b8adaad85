// Bundles the extension into dist/extension.js (vscode stays external), the conversation
// webview's script into dist/conversation.js (for the browser), and copies the codicon font.
// Usage: node scripts/build.mjs [--production] [--watch]
import { cpSync, mkdirSync } from 'node:fs';
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'info',
};

const builds = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: ['src/conversation/webview/main.ts'],
    outfile: 'dist/conversation.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
];

// The webview shows VS Code's icons from the extension's own files (its CSP loads nothing remote).
mkdirSync('dist/codicons', { recursive: true });
for (const file of ['codicon.css', 'codicon.ttf']) {
  cpSync(`node_modules/@vscode/codicons/dist/${file}`, `dist/codicons/${file}`);
}

if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
