import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DraftParams, ExamplesParams } from '../src/protocol';
import { INITIAL, Status, StatusEvent, draftEvents, formatExamples, formatLatency, reduce, render } from '../src/status';

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

const ACTIVE = { uri: 'file:///work/geometry.py', version: 7 };
const ALL_PASSED: ExamplesParams = { passed: 3, failed: 0, total: 3, firstFailure: null };
const ONE_FAILED: ExamplesParams = { passed: 1, failed: 2, total: 3, firstFailure: 'f(2) returned 5, expected 4' };

/** A prewrite/draft notification of the active document's text as it is, unless overridden. */
function draft(overrides: Partial<DraftParams> = {}): DraftParams {
  return {
    uri: ACTIVE.uri,
    version: ACTIVE.version,
    status: 'verified',
    text: '"""\n    return 2 * x',
    position: { line: 1, character: 16 },
    acceptedTokens: 8,
    draftTokens: 8,
    generatedTokens: 0,
    forwards: 1,
    ms: 30,
    examples: null,
    ...overrides,
  };
}

/** The status after these drafts arrive, with the active editor at ACTIVE and readiness shown. */
function drafts(from: Status, ...notifications: DraftParams[]): Status {
  return notifications.flatMap((params) => draftEvents(params, ACTIVE, true)).reduce(reduce, from);
}

const readyNow = () => run({ kind: 'started' }, { kind: 'server', state: 'ready', model: 'm', message: '' });

test('examples: all passed reads examples 3/3 beside draft ready', () => {
  const checked = drafts(readyNow(), draft(), draft({ examples: ALL_PASSED }));
  assert.equal(render(checked).text, '$(check) prewrite draft ready · examples 3/3');
  assert.match(render(checked).tooltip, /\nexamples: 3 of 3 passed\n/);
});

test('examples: a failure reads the count and the first failure, cut short in the text, whole in the tooltip', () => {
  const failed = drafts(readyNow(), draft({ examples: ONE_FAILED }));
  assert.equal(render(failed).text, '$(check) prewrite draft ready · examples 1/3: f(2) returned 5, expected 4');
  const long = 'scale([1.5, 2.5], 3) returned [4.5, 7.5, 0.0],\n  expected [4.5, 7.5]';
  const cut = drafts(readyNow(), draft({ examples: { ...ONE_FAILED, firstFailure: long } }));
  assert.equal(render(cut).text, '$(check) prewrite draft ready · examples 1/3: scale([1.5, 2.5], 3) returned [4.5, 7.5…');
  assert.ok(render(cut).tooltip.includes(`examples: 1 of 3 passed; first failure: ${long}`), render(cut).tooltip);
  assert.equal(formatExamples({ passed: 0, failed: 2, total: 2, firstFailure: null }), 'examples 0/2');
});

test('examples: an alternative that passes them is named in the text and the tooltip, and goes with a newer draft', () => {
  const alternative = { passed: 3, total: 3, seed: 2, drawn: 2, text: '\n    return 4' };
  const found = drafts(readyNow(), draft({ examples: ONE_FAILED, alternative }));
  assert.equal(render(found).text, '$(check) prewrite draft ready · examples 1/3: f(2) returned 5, expected 4 · alternative 3/3');
  assert.match(render(found).tooltip, /\nalternative \(not the greedy answer; sample 2, 2 drawn\): examples 3 of 3 passed; offered first/);
  const again = drafts(found, draft({ examples: ONE_FAILED, alternative: null }));
  assert.doesNotMatch(render(again).text + render(again).tooltip, /alternative/);
});

test('examples: a newer draft without them clears them, and so does an edit', () => {
  const checked = drafts(readyNow(), draft({ examples: ALL_PASSED }));
  const again = drafts(checked, draft({ examples: null }));
  assert.equal(again.examples, undefined);
  assert.equal(render(again).text, '$(check) prewrite draft ready');
  const regenerating = drafts(checked, draft({ status: 'regenerating', examples: null }));
  assert.doesNotMatch(render(regenerating).text + render(regenerating).tooltip, /examples/);
  const edited = reduce(checked, { kind: 'edited' });
  assert.equal(render(edited).text, '$(check) prewrite ready');
  assert.doesNotMatch(render(edited).tooltip, /examples/);
});

test("examples: another document's draft does not show for the active one", () => {
  const other = drafts(readyNow(), draft({ uri: 'file:///work/other.py', examples: ONE_FAILED }));
  assert.equal(other.examples, undefined);
  assert.doesNotMatch(render(other).text + render(other).tooltip, /examples/);
  const checked = drafts(readyNow(), draft({ examples: ALL_PASSED }));
  const kept = drafts(checked, draft({ uri: 'file:///work/other.py', examples: null }));
  assert.equal(render(kept).text, '$(check) prewrite ready · examples 3/3', "another's draft does not clear them");
  const switched = reduce(checked, { kind: 'editor', uri: 'file:///work/other.py', language: 'python', enabled: true });
  assert.doesNotMatch(render(switched).text, /examples/, 'the other editor does not show them');
  const sameEditor = reduce(checked, { kind: 'editor', uri: ACTIVE.uri, language: 'python', enabled: true });
  assert.match(render(sameEditor).text, /examples 3\/3$/, 'a settings change in the same editor keeps them');
});

test('examples: a draft of older text is ignored', () => {
  const stale = drafts(readyNow(), draft({ version: ACTIVE.version - 1, examples: ALL_PASSED }));
  assert.equal(stale.examples, undefined);
  assert.doesNotMatch(render(stale).text, /examples/);
  const checked = drafts(readyNow(), draft({ examples: ONE_FAILED }));
  const kept = drafts(checked, draft({ version: ACTIVE.version - 1, examples: null }));
  assert.deepEqual(kept.examples, checked.examples, 'an older draft does not clear them either');
  assert.match(render(kept).text, /examples 1\/3: f\(2\) returned 5, expected 4$/);
});

test('examples: shown with the readiness indicator off, beside the last latency', () => {
  const answered = reduce(readyNow(), { kind: 'answered', ms: 9, chars: 40 });
  const events = draftEvents(draft({ examples: ALL_PASSED }), ACTIVE, false);
  assert.deepEqual(events.map((event) => event.kind), ['examples'], 'no readiness without draftStatus');
  assert.equal(render(events.reduce(reduce, answered)).text, '$(check) prewrite 9 ms · examples 3/3');
  assert.deepEqual(draftEvents(draft({ examples: ALL_PASSED }), undefined, true).map((event) => event.kind), ['draft'], 'no editor');
});
