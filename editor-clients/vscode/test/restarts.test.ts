import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CrashRecovery, RESTART_POLICY, RestartPolicy, decide } from '../src/restarts';

test('the pause before a restart doubles with each crash, up to its cap; the fifth crash gives up', () => {
  const delays = [1, 2, 3, 4].map((crash) => decide(RESTART_POLICY, crash));
  assert.deepEqual(delays, [
    { action: 'restart', crash: 1, limit: 5, delayMs: 2_000 },
    { action: 'restart', crash: 2, limit: 5, delayMs: 4_000 },
    { action: 'restart', crash: 3, limit: 5, delayMs: 8_000 },
    { action: 'restart', crash: 4, limit: 5, delayMs: 16_000 },
  ]);
  assert.deepEqual(decide(RESTART_POLICY, 5), { action: 'give-up', crashes: 5, windowMs: 180_000 });
  const patient: RestartPolicy = { ...RESTART_POLICY, limit: 10 };
  assert.equal((decide(patient, 6) as { delayMs: number }).delayMs, 30_000, '64 s capped at 30 s');
});

test('a crash schedules one restart after its pause; five within three minutes give up', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let restarts = 0;
  const recovery = new CrashRecovery(() => (restarts += 1));
  let now = 1_000_000;
  assert.deepEqual(recovery.crashed(now), { action: 'restart', crash: 1, limit: 5, delayMs: 2_000 });
  assert.ok(recovery.pending);
  t.mock.timers.tick(1_999);
  assert.equal(restarts, 0, 'not before the pause is over');
  t.mock.timers.tick(1);
  assert.equal(restarts, 1);
  assert.ok(!recovery.pending);
  for (const crash of [2, 3, 4]) {
    now += 10_000;
    const decision = recovery.crashed(now);
    assert.equal(decision.action === 'restart' && decision.crash, crash);
    t.mock.timers.tick(decision.action === 'restart' ? decision.delayMs : 0);
  }
  assert.equal(restarts, 4);
  now += 10_000; // 40 s after the first crash
  assert.deepEqual(recovery.crashed(now), { action: 'give-up', crashes: 5, windowMs: 180_000 });
  assert.ok(!recovery.pending, 'nothing is scheduled after giving up');
  t.mock.timers.tick(60_000);
  assert.equal(restarts, 4);
});

test('crashes older than the window are forgotten, so a rare crash never gives up', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const recovery = new CrashRecovery(() => undefined);
  for (let crash = 0; crash < 20; crash += 1) {
    const decision = recovery.crashed(crash * 50_000); // every 50 s: at most 4 within 3 minutes
    assert.equal(decision.action, 'restart', `crash ${crash + 1}`);
    t.mock.timers.tick(50_000);
  }
  // Four in the window (at 800, 850, 900 and 950 s), then one more 10 s later: the fifth.
  assert.equal(recovery.crashed(19 * 50_000 + 10_000).action, 'give-up');
});

test('a restart or stop asked for by the user cancels the pending restart and forgives the crashes', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let restarts = 0;
  const recovery = new CrashRecovery(() => (restarts += 1));
  for (let crash = 1; crash <= 4; crash += 1) {
    recovery.crashed(crash * 1_000);
  }
  assert.ok(recovery.pending);
  recovery.reset();
  assert.ok(!recovery.pending);
  t.mock.timers.tick(60_000);
  assert.equal(restarts, 0, 'the cancelled restart never runs');
  assert.deepEqual(recovery.crashed(10_000), { action: 'restart', crash: 1, limit: 5, delayMs: 2_000 });
});
