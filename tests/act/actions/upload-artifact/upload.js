// Upload: copy what `path` names into <store>/<name>/, as v4 lays an artifact out (a
// folder's contents at the top, a file by its name).
'use strict';
const fs = require('fs');
const path = require('path');
const { input, storeRoot, setOutput, fail, globRegExp, resolvePath } = require('./store.js'); // copied beside this file by tests/act/harness.py

function files(paths, hidden) {
  const found = [];
  const walk = (abs, rel) => {
    const base = path.basename(abs);
    if (!hidden && rel !== '' && base.startsWith('.')) return;
    const stat = fs.statSync(abs);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(abs)) walk(path.join(abs, entry), path.join(rel, entry));
    } else if (stat.isFile()) {
      found.push([abs, rel === '' ? base : rel]);
    }
  };
  for (const p of paths) if (fs.existsSync(p)) walk(p, '');
  return found;
}

function main() {
  const name = input('name', 'artifact');
  if (!name || /[":<>|*?\r\n\\/]/.test(name)) fail(`artifact name is not valid: ${name}`);
  const paths = input('path').split('\n').map((s) => s.trim()).filter(Boolean).map(resolvePath);
  const found = files(paths, input('include-hidden-files') === 'true');
  if (found.length === 0) {
    const rule = input('if-no-files-found', 'warn');
    const message = `No files were found with the provided path: ${paths.join(', ')}. No artifacts will be uploaded.`;
    if (rule === 'error') fail(message);
    console.log(rule === 'warn' ? `::warning::${message}` : message);
    return;
  }
  // A fault the test may inject: the upload of these artifacts fails, as when the
  // network goes down at the end of a job.
  const broken = process.env.BENCHBOT_ACT_FAIL_UPLOAD;
  if (broken && globRegExp(broken).test(name)) fail(`Failed to upload artifact ${name} (a fault the test injected)`);
  const target = path.join(storeRoot(), name);
  if (fs.existsSync(target)) {
    if (input('overwrite') !== 'true') fail(`an artifact with this name already exists on the workflow run: ${name}`);
    fs.rmSync(target, { recursive: true, force: true });
  }
  for (const [abs, rel] of found) {
    fs.mkdirSync(path.dirname(path.join(target, rel)), { recursive: true });
    fs.copyFileSync(abs, path.join(target, rel));
  }
  console.log(`Artifact ${name} has been uploaded: ${found.length} file(s)`);
  setOutput('artifact-id', String(fs.readdirSync(storeRoot()).length));
  setOutput('artifact-url', `file://${target}`);
}

main();
