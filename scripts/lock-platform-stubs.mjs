// Completes package-lock.json for `npm ci` when it was written against a registry that serves only
// some platforms' builds of a package (e.g. @next/swc-*, @tailwindcss/oxide-* for Linux only).
// npm then leaves the other platforms' optional packages out of the lock, and `npm ci` refuses the
// lock ("Missing: @next/swc-darwin-arm64@ from lock file"). This adds an entry with version, os and
// cpu for each missing optional platform package; npm skips them at install on other platforms,
// and a full `npm install` elsewhere replaces them with complete entries.
//
//   node scripts/lock-platform-stubs.mjs [package-lock.json]     (idempotent)
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages ?? {};
const added = [];

for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = key === '' ? `node_modules/${name}` : `${key}/node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const m = name.match(/-(darwin|win32|linux|android|freebsd|openbsd|netbsd|sunos|aix|wasm32)(?:-([a-z0-9]+))?/);
    if (!m) {
      console.error(`left out ${name}: cannot tell its platform from the name`);
      continue;
    }
    // Same key order as npm writes: version, cpu, optional, os.
    const cpu = m[1] === 'wasm32' ? 'wasm32' : m[2] === 'gnueabihf' ? 'arm' : m[2];
    const stub = {
      version,
      ...(cpu ? { cpu: [cpu] } : {}),
      optional: true,
      ...(m[1] !== 'wasm32' ? { os: [m[1]] } : {}),
    };
    packages[`node_modules/${name}`] = stub;
    added.push(`${name}@${version} ${JSON.stringify({ os: stub.os, cpu: stub.cpu })}`);
  }
}

if (added.length) {
  const sorted = Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')));
  lock.packages = Object.fromEntries(sorted);
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(added.length ? `added ${added.length} entries:\n  ${added.join('\n  ')}` : 'nothing to add');
