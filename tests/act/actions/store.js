// The artifact store shared by the two stand-ins (tests/act/harness.py copies this file
// into each action's folder): one folder per artifact under $BENCHBOT_ACT_ARTIFACTS.
'use strict';
const fs = require('fs');
const path = require('path');

function input(name, fallback = '') {
  const value = process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`];
  return value === undefined || value === '' ? fallback : value.trim();
}

function storeRoot() {
  const root = process.env.BENCHBOT_ACT_ARTIFACTS;
  if (!root) throw new Error('BENCHBOT_ACT_ARTIFACTS is not set: the test names the artifact store');
  fs.mkdirSync(root, { recursive: true });
  return root;
}

function setOutput(name, value) {
  fs.appendFileSync(process.env.GITHUB_OUTPUT, `${name}=${value}\n`);
}

function fail(message) {
  console.log(`::error::${message}`);
  process.exit(1);
}

// A glob over artifact names, as minimatch reads the few forms workflows use: `*`, `?`.
function globRegExp(glob) {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

function resolvePath(p) {
  const home = process.env.HOME || '';
  const expanded = p.startsWith('~') ? home + p.slice(1) : p;
  return path.resolve(process.env.GITHUB_WORKSPACE || process.cwd(), expanded);
}

module.exports = { input, storeRoot, setOutput, fail, globRegExp, resolvePath };
