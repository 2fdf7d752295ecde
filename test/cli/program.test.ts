import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../src/cli/program.js';

const names = (argv: string[]) => commandsFor(argv).map(([n]) => n[0]);

describe('commandsFor: only the command being run is defined', () => {
  it('picks the command after global options, all of them for help or unknown names, none for --version', () => {
    expect(names(['send', 'ada', 'hi'])).toEqual(['send']);
    expect(names(['--db', 'x.db', '--profile', 'p', '--backend', 'local', 'window', 'ada'])).toEqual(['window']);
    expect(names(['--verbose', 'logout'])).toEqual(['login']);
    expect(names(['--version'])).toEqual([]);
    expect(names(['-V'])).toEqual([]);
    expect(names([]).length).toBeGreaterThan(15);
    expect(names(['--help'])).toEqual(names([]));
    expect(names(['--version', '--help'])).toEqual(names([]));
    expect(names(['frobnicate'])).toEqual(names([]));
  });
});
