// Builds lib/graphrag_mcp_server/handlers/explore/vendor/graph_libs.js: sigma.js, graphology and
// @sigma/node-border (versions pinned in package-lock.json) as one minified script that sets
// window.GraphLibs, with the licence text of every bundled package kept at its top.
// Run: npm ci && npm run graph-page-bundle [-- OTHER_FILE] (the file is committed, so a
// pip-installed package draws its graph page without Node).
import { build } from "esbuild";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const target =
  process.argv[2] || join(repo, "lib/graphrag_mcp_server/handlers/explore/vendor/graph_libs.js");
const entry = `
import Graph from "graphology";
import Sigma from "sigma";
import { createNodeBorderProgram } from "@sigma/node-border";
window.GraphLibs = { Graph, Sigma, createNodeBorderProgram };
`;
const result = await build({
  stdin: { contents: entry, resolveDir: repo, loader: "js" },
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2019",
  write: false,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}
const notices = [...packages].sort().map((name) => {
  const folder = join(repo, "node_modules", name);
  const version = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).version;
  const licence = ["LICENSE", "LICENSE.txt", "LICENSE.md", "license"]
    .map((file) => join(folder, file))
    .find(existsSync);
  const text = licence
    ? readFileSync(licence, "utf8").trim()
    : "MIT (package.json; no licence file shipped)";
  return `${name} ${version}\n\n${text.replaceAll("*/", "* /")}`;
});
const header =
  `/*! Bundled by scripts/graph_page_bundle.mjs from the npm registry packages below.\n\n` +
  notices.join("\n\n----------------------------------------\n\n") +
  "\n*/\n";
writeFileSync(target, header + result.outputFiles[0].text);
console.log(`wrote ${target}: ${[...packages].sort().join(", ")}`);
