import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/cli/progress.js';

describe('batch progress bar', () => {
  it('draws done, failed, elapsed, rate and ETA in place on a terminal, from 0/N on, and nothing otherwise', () => {
    let tty = '';
    const p = new Progress({ write: (s) => ((tty += s), true) }, 4, true);
    p.tick(true);
    p.tick(false);
    p.tick(true);
    p.tick(true);
    p.finish();
    const last = tty.split('\r').at(-1)!;
    expect(last).toMatch(/^\[█{20}\] 4\/4 {2}1 failed {2}\d+s {2}[\d.]+\/s {2}ETA 0s\x1b\[K\n$/);
    // Drawn before anything finished, so a slow first job does not leave the terminal blank.
    expect(tty.startsWith('\r[░░░░░░░░░░░░░░░░░░░░] 0/4  0 failed  0s  0.0/s  ETA -\x1b[K\r')).toBe(true);
    expect(p.line()).toMatch(/^\[█{20}\] 4\/4 {2}1 failed/);
    let piped = '';
    const q = new Progress({ write: (s) => ((piped += s), true) }, 2, false);
    q.tick(true);
    q.tick(true);
    q.finish();
    expect(piped).toBe('');
    expect(q.done).toBe(2);
  });
});
