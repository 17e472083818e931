// Bundles the extension (Node, CommonJS, `vscode` external) and the two webview scripts
// (browser IIFEs). `--production` minifies and drops source maps; `--watch` rebuilds on change;
// `--out-root DIR` writes DIR/dist/ instead of ./dist/ (the packaging script builds into its
// staging folder that way, leaving the development bundle alone).
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const rootAt = process.argv.indexOf('--out-root');
const outRoot = rootAt >= 0 ? process.argv[rootAt + 1] : '.';
if (outRoot === undefined) throw new Error('--out-root needs a directory');

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
};

const builds = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: path.join(outRoot, 'dist', 'extension.js'),
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: { chat: 'src/webview/chat.ts', inspector: 'src/webview/inspector.ts' },
    outdir: path.join(outRoot, 'dist', 'webview'),
    platform: 'browser',
    format: 'iife',
    target: 'es2020',
  },
];

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
