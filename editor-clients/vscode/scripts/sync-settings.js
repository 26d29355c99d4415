// Rewrites package.json's server settings from the server's schema (run after `npm run build`).
const fs = require('node:fs');
const path = require('node:path');
const { synced } = require('../out/src/schema');
const { serverSchema } = require('../out/test/repo');

const file = path.join(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
const configuration = pkg.contributes.configuration;
configuration.properties = synced(configuration.properties, serverSchema());
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
console.log(`package.json: ${Object.keys(configuration.properties).length} settings`);
