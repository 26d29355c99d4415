import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Contributed,
  languageEnabled,
  launchChanged,
  serverKeys,
  serverLaunch,
  serverSettings,
  withDraftStatus,
} from '../src/settings';

const contributed: Contributed = {
  'prewrite.pythonPath': { type: 'string', default: '' },
  'prewrite.serverCommand': { type: 'string', default: 'prewrite' },
  'prewrite.serverArgs': { type: 'array', default: [] },
  'prewrite.trace.server': { type: 'string', default: 'off' },
  'prewrite.model': { type: 'string', default: 'qwen2.5-coder-0.5b' },
  'prewrite.maxTokens': { type: 'integer', default: 256 },
  'prewrite.threads': { type: ['integer', 'null'], default: null },
};

function getter(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

test('server keys are the contributed settings minus the client-only ones', () => {
  assert.deepEqual(serverKeys(contributed), ['model', 'maxTokens', 'threads']);
});

test('server settings are flat camelCase, without unset values', () => {
  const get = getter({ model: 'smollm2-135m', maxTokens: 48, threads: null, pythonPath: '/x' });
  assert.deepEqual(serverSettings(serverKeys(contributed), get), { model: 'smollm2-135m', maxTokens: 48 });
});

test('the server runs as `prewrite serve` unless a Python is named', () => {
  assert.deepEqual(serverLaunch(getter({})), { command: 'prewrite', args: ['serve'] });
  assert.deepEqual(serverLaunch(getter({ serverCommand: ' /opt/bin/prewrite ', serverArgs: ['--log', 'x'] })), {
    command: '/opt/bin/prewrite',
    args: ['serve', '--log', 'x'],
  });
  assert.deepEqual(serverLaunch(getter({ pythonPath: '/venv/bin/python', serverCommand: 'ignored' })), {
    command: '/venv/bin/python',
    args: ['-m', 'lsp_server.cli', 'serve'],
  });
});

test('only launch settings restart the server', () => {
  assert.equal(launchChanged((key) => key === 'prewrite.pythonPath'), true);
  assert.equal(launchChanged((key) => key === 'prewrite.model'), false);
});

test('prewrite.enable switches languages like github.copilot.enable', () => {
  assert.equal(languageEnabled({ '*': true }, 'python'), true);
  assert.equal(languageEnabled({ '*': true, python: false }, 'python'), false);
  assert.equal(languageEnabled({ '*': true, python: false }, 'typescript'), true, 'only the language named');
  assert.equal(languageEnabled({ '*': false, python: true }, 'python'), true);
  assert.equal(languageEnabled({ '*': false, python: true }, 'go'), false, '"*" for the rest');
  assert.equal(languageEnabled({}, 'go'), true, 'on unless switched off');
  for (const bad of [undefined, null, true, 'python', ['python'], { python: 'no' }]) {
    assert.equal(languageEnabled(bad, 'python'), true, `bad value ${JSON.stringify(bad)} counts as unset`);
  }
});

test('the draft status asks the server for drafts unless the user set draftPreview', () => {
  assert.deepEqual(withDraftStatus({ model: 'm' }, undefined), { model: 'm', draftPreview: true });
  assert.deepEqual(withDraftStatus({ model: 'm' }, true), { model: 'm', draftPreview: true });
  assert.deepEqual(withDraftStatus({ model: 'm' }, false), { model: 'm' });
  assert.deepEqual(withDraftStatus({ draftPreview: false }, true), { draftPreview: false }, "the user's word wins");
});
