import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INITIAL, Status, StatusEvent, formatLatency, reduce, render } from '../src/status';

function run(...events: StatusEvent[]): Status {
  return events.reduce(reduce, INITIAL);
}

test('starts spinning, then loads the model with its percentage, then is ready', () => {
  assert.equal(render(INITIAL).text, '$(loading~spin) prewrite starting');
  assert.equal(render(run({ kind: 'started' })).text, '$(loading~spin) prewrite loading');
  const loading = run({ kind: 'started' }, { kind: 'progress', stage: 'begin', message: 'smollm2-135m' });
  assert.equal(render(loading).text, '$(loading~spin) prewrite loading');
  const reported = reduce(loading, { kind: 'progress', stage: 'report', percentage: 41.6 });
  assert.equal(render(reported).text, '$(loading~spin) prewrite loading 42%');
  assert.match(render(reported).tooltip, /smollm2-135m/);
  const ready = reduce(reported, { kind: 'progress', stage: 'end' });
  assert.equal(render(ready).text, '$(check) prewrite ready');
});

test('shows drafting while the server regenerates and the last latency once answered', () => {
  const ready = { kind: 'server', state: 'ready', model: 'smollm2-135m', message: '' } as const;
  const drafting = run({ kind: 'started' }, ready, { kind: 'draft', status: 'regenerating' });
  assert.equal(render(drafting).text, '$(sync~spin) prewrite drafting');
  const verified = reduce(drafting, { kind: 'draft', status: 'verified' });
  assert.equal(verified.phase, 'ready');
  const answered = reduce(verified, { kind: 'answered', ms: 12.4, chars: 80 });
  assert.equal(render(answered).text, '$(check) prewrite 12 ms');
  assert.match(render(answered).tooltip, /last completion: 12 ms, 80 characters/);
});

test('a draft notification does not hide the model loading', () => {
  const loading = run({ kind: 'progress', stage: 'begin' }, { kind: 'draft', status: 'regenerating' });
  assert.equal(loading.phase, 'loading');
});

test('toggled off stays off through drafts and answers until toggled on', () => {
  const off = run({ kind: 'started' }, { kind: 'toggled', enabled: false }, { kind: 'draft', status: 'regenerating' });
  assert.equal(off.phase, 'off');
  assert.equal(render(off).text, '$(circle-slash) prewrite off');
  assert.equal(reduce(off, { kind: 'toggled', enabled: true }).phase, 'ready');
});

test('failure and stop are shown with the reason', () => {
  const failed = run({ kind: 'failed', message: 'could not start prewrite: ENOENT' });
  assert.equal(render(failed).text, '$(error) prewrite error');
  assert.match(render(failed).tooltip, /ENOENT/);
  const stopped = reduce(failed, { kind: 'stopped' });
  assert.equal(render(stopped).text, '$(debug-stop) prewrite stopped');
  assert.equal(reduce(stopped, { kind: 'draft', status: 'verified' }).phase, 'stopped', 'stragglers are ignored');
  assert.equal(reduce(stopped, { kind: 'started' }).phase, 'loading', 'a restart loads again');
});

test('latency is in milliseconds below ten seconds, seconds above', () => {
  assert.equal(formatLatency(0.4), '0 ms');
  assert.equal(formatLatency(9_999), '9999 ms');
  assert.equal(formatLatency(12_345), '12.3 s');
});

test('follows the server status notification: loading, ready, error, disabled', () => {
  const loading = run({ kind: 'started' }, { kind: 'server', state: 'loading', model: 'smollm2-135m', message: 'loading weights' });
  assert.equal(render(loading).text, '$(loading~spin) prewrite loading');
  assert.match(render(loading).tooltip, /prewrite: loading \(smollm2-135m\)\nloading weights/);
  assert.equal(reduce(loading, { kind: 'server', state: 'ready', model: 'smollm2-135m', message: '' }).phase, 'ready');
  const failed = reduce(loading, { kind: 'server', state: 'error', model: '', message: 'no such model' });
  assert.equal(failed.phase, 'error');
  assert.equal(failed.model, 'smollm2-135m');
  const off = reduce(failed, { kind: 'server', state: 'disabled', model: '', message: '' });
  assert.equal(render(off).text, '$(circle-slash) prewrite off');
  assert.equal(reduce(off, { kind: 'server', state: 'ready', model: '', message: '' }).phase, 'ready');
});

test('a crash shows the restart to come, ignores the stop that follows, and loads again on the restart', () => {
  const ready = run({ kind: 'started' }, { kind: 'server', state: 'ready', model: 'smollm2-135m', message: '' });
  const restarting = reduce(ready, { kind: 'restarting', crash: 1, limit: 5, inMs: 2_000 });
  assert.deepEqual(render(restarting), {
    text: '$(debug-restart) prewrite restarting (crash 1 of 5, in 2 s)',
    tooltip: 'prewrite: restarting (smollm2-135m)\nclick to toggle completions',
    click: 'toggle',
  });
  for (const event of [{ kind: 'stopped' }, { kind: 'failed', message: 'connection got disposed' }, { kind: 'draft', status: 'verified' }] as const) {
    assert.equal(reduce(restarting, event), restarting, `${event.kind} after a crash keeps the crash's status`);
  }
  const starting = reduce(restarting, { kind: 'starting' });
  assert.equal(render(starting).text, '$(loading~spin) prewrite starting');
  assert.equal(starting.restart, undefined);
  const loading = reduce(starting, { kind: 'started' });
  assert.equal(loading.phase, 'loading');
  assert.equal(reduce(loading, { kind: 'server', state: 'ready', model: 'smollm2-135m', message: '' }).phase, 'ready');
});

test('a crash while toggled off is shown too', () => {
  const off = run({ kind: 'started' }, { kind: 'toggled', enabled: false });
  assert.equal(reduce(off, { kind: 'restarting', crash: 2, limit: 5, inMs: 4_000 }).phase, 'restarting');
});

test('given up after crashes: an error until a new start, and a click restarts', () => {
  const message = 'The prewrite server crashed 5 times within 3 minutes and is not started again';
  const crashed = run({ kind: 'started' }, { kind: 'restarting', crash: 4, limit: 5, inMs: 16_000 }, { kind: 'gaveUp', message });
  const rendered = render(crashed);
  assert.equal(rendered.text, '$(error) prewrite crashed');
  assert.equal(rendered.click, 'restart');
  assert.match(rendered.tooltip, /crashed 5 times within 3 minutes[^]*\nclick to restart the server$/);
  assert.equal(reduce(crashed, { kind: 'stopped' }), crashed);
  assert.equal(reduce(crashed, { kind: 'failed', message: 'connection got disposed' }), crashed);
  assert.equal(render(reduce(crashed, { kind: 'starting' })).click, 'toggle');
});

test('the tooltip says why there is no suggestion', () => {
  const ready = run({ kind: 'started' }, { kind: 'server', state: 'ready', model: 'smollm2-135m', message: '' });
  const why = (status: Status) => render(status).tooltip.split('\n').find((line) => line.startsWith('no suggestion: '));
  assert.equal(why(ready), undefined, 'nothing in the way');
  assert.match(String(why(reduce(ready, { kind: 'empty', reason: 'noSpec' }))), /no spec under the cursor/);
  assert.match(String(why(reduce(ready, { kind: 'empty', reason: 'stale' }))), /the text changed/);
  assert.match(String(why(run({ kind: 'started' }))), /the model is loading/);
  assert.match(String(why(reduce(ready, { kind: 'draft', status: 'regenerating' }))), /still being regenerated/);
  assert.match(String(why(reduce(ready, { kind: 'toggled', enabled: false }))), /toggled off/);
  const answered = reduce(reduce(ready, { kind: 'empty', reason: 'noSpec' }), { kind: 'answered', ms: 5, chars: 9 });
  assert.equal(why(answered), undefined, 'an answer clears the last reason');
});

test('a language switched off says so in the text and the tooltip, and only in its editors', () => {
  const ready = run({ kind: 'started' }, { kind: 'server', state: 'ready', model: 'm', message: '' });
  const off = reduce(ready, { kind: 'editor', language: 'python', enabled: false });
  assert.equal(render(off).text, '$(circle-slash) prewrite off for python');
  assert.match(render(off).tooltip, /no suggestion: disabled for python \(prewrite\.enable\)/);
  assert.equal(reduce(off, { kind: 'draft', status: 'regenerating' }).languageOff, 'python', 'drafts do not undo it');
  const other = reduce(off, { kind: 'editor', language: 'typescript', enabled: true });
  assert.equal(render(other).text, '$(check) prewrite ready');
  const stopped = reduce(off, { kind: 'stopped' });
  assert.equal(render(stopped).text, '$(debug-stop) prewrite stopped', 'a stopped server says so first');
});

test('draft readiness: drafting, then ready for the current text until the next edit', () => {
  const ready = run({ kind: 'started' }, { kind: 'server', state: 'ready', model: 'm', message: '' });
  const drafting = reduce(ready, { kind: 'draft', status: 'accepted' });
  assert.equal(render(drafting).text, '$(sync~spin) prewrite drafting');
  const current = reduce(drafting, { kind: 'draft', status: 'verified', current: true });
  assert.equal(render(current).text, '$(check) prewrite draft ready');
  assert.match(render(current).tooltip, /the draft is ready for the text as it is/);
  assert.equal(render(reduce(current, { kind: 'edited' })).text, '$(check) prewrite ready');
  const older = reduce(drafting, { kind: 'draft', status: 'verified', current: false });
  assert.equal(render(older).text, '$(check) prewrite ready', 'a draft of other text is no readiness');
  const answered = reduce(current, { kind: 'answered', ms: 7, chars: 3 });
  assert.equal(render(answered).text, '$(check) prewrite 7 ms');
});
