// package.json's server settings must be what the server's pydantic schema says (STYLE habit 3).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { JsonSchema, drift, expectedSettings, settingFor } from '../src/schema';
import { SECTION, serverKeys } from '../src/settings';
import { serverSchema } from './repo';

const packageJson = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const contributed = packageJson.contributes.configuration.properties;

test("package.json contributes exactly the server's settings (run `npm run sync-settings` to fix)", () => {
  const schema = serverSchema() as unknown as JsonSchema & { section: string };
  assert.equal(schema.section, SECTION);
  assert.deepEqual(drift(contributed, schema), []);
  assert.deepEqual(serverKeys(contributed).sort(), Object.keys(schema.properties).sort());
});

test('optional and bounded schema properties become nullable, bounded settings', () => {
  const schema: JsonSchema = {
    properties: {
      threads: { anyOf: [{ type: 'integer', minimum: 1, maximum: 512 }, { type: 'null' }], default: null },
      mode: { enum: ['a', 'b'], type: 'string', default: 'a', description: 'Mode.' },
      stops: { type: 'array', items: { type: 'string' }, default: [] },
    },
  };
  assert.deepEqual(settingFor(schema.properties.threads, schema), {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 512,
    default: null,
  });
  assert.deepEqual(expectedSettings(schema)['prewrite.mode'], {
    type: 'string',
    enum: ['a', 'b'],
    default: 'a',
    description: 'Mode.',
  });
  assert.deepEqual(settingFor(schema.properties.stops, schema), { type: 'array', items: { type: 'string' }, default: [] });
});

test('drift names a setting that is missing, stale or different', () => {
  const schema: JsonSchema = { properties: { maxTokens: { type: 'integer', default: 256, description: 'Most.' } } };
  const problems = drift(
    {
      'prewrite.maxTokens': { type: 'integer', default: 128, description: 'Most.' },
      'prewrite.gone': { type: 'string', default: '' },
      'prewrite.pythonPath': { type: 'string', default: '' },
    },
    schema,
  );
  assert.deepEqual(problems, [
    'prewrite.maxTokens.default: package.json has 128, the server schema 256',
    'prewrite.gone: contributed by package.json but not a server setting nor a client one',
  ]);
});
