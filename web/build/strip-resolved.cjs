// Drops every "resolved" URL from the package-lock.json in the working
// directory: lockfile entries must not name a registry host. npm ci then
// fetches from whichever registry the builder is configured for and checks
// the recorded integrity. Used by web/build/build.sh and
// web/console/build.sh.
const fs = require('fs');
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
for (const p of Object.values(lock.packages || {})) delete p.resolved;
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
