// Download: by name into `path`; by pattern into path/<name>/ each (or all into `path`
// with merge-multiple). Nothing to download is a failed step.
'use strict';
const fs = require('fs');
const path = require('path');
const { input, storeRoot, setOutput, fail, globRegExp, resolvePath } = require('./store.js'); // copied beside this file by tests/act/harness.py

function main() {
  const root = storeRoot();
  const dest = resolvePath(input('path', process.env.GITHUB_WORKSPACE || '.'));
  const name = input('name');
  const stored = fs.readdirSync(root).sort();
  let chosen;
  if (name) {
    if (!stored.includes(name)) fail(`Unable to download artifact(s): Artifact not found for name: ${name}`);
    chosen = [name];
  } else {
    const pattern = input('pattern');
    chosen = pattern ? stored.filter((n) => globRegExp(pattern).test(n)) : stored;
    if (chosen.length === 0) fail(`Unable to download artifact(s): no artifact matches ${pattern || '*'}`);
  }
  const separate = !name && input('merge-multiple') !== 'true' && (chosen.length > 1 || input('pattern') !== '');
  for (const n of chosen) {
    const into = separate ? path.join(dest, n) : dest;
    fs.mkdirSync(into, { recursive: true });
    fs.cpSync(path.join(root, n), into, { recursive: true });
    console.log(`Artifact ${n} downloaded to ${into}`);
  }
  setOutput('download-path', dest);
}

main();
