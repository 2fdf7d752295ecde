import { describe, expect, it } from 'vitest';
import { formatCount, formatUsd, plural } from '../../src/core/text/numbers.js';
import { recallNotice, rotationNotice, usageText } from '../../src/ui/finish-notice.js';

describe('how numbers read', () => {
  it('money: cents and separators from a dollar up, three significant digits below, never $0.0000 for a real charge', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.000018)).toBe('$0.000018');
    expect(formatUsd(0.00001834)).toBe('$0.0000183');
    expect(formatUsd(0.0123456)).toBe('$0.0123');
    expect(formatUsd(0.5)).toBe('$0.50');
    expect(formatUsd(0.01)).toBe('$0.01');
    expect(formatUsd(4.999982)).toBe('$5.00');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(-0.25)).toBe('-$0.25');
  });

  it('counts have separators and nouns agree with them', () => {
    expect(formatCount(1108)).toBe('1,108');
    expect(plural(1, 'conversation')).toBe('1 conversation');
    expect(plural(0, 'message')).toBe('0 messages');
    expect(plural(1108, 'message')).toBe('1,108 messages');
  });

  it('a usage the provider did not report reads as such, not "0 prompt + 0"; counts get separators', () => {
    expect(usageText({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })).toBe('no token counts (the provider reported none)');
    expect(usageText({ prompt_tokens: 1108, completion_tokens: 48, total_tokens: 1156 })).toBe('1,108 prompt + 48 completion tokens');
    const rotation = { type: 'rotation', covers: [1, 12], summaryTokens: 1200, windowTokens: 3400, summaryUsage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } } as const;
    expect(rotationNotice(rotation as never, true)).toBe(
      'window rotated: messages 1–12 were folded into a 1,200-token summary (window now 3,400 tokens); the provider reported no token counts for the summary',
    );
    expect(recallNotice([{ seq: 3, role: 'user', tokens: 1 }] as never)).toBe('recalled 1 message (#3), 1 token');
  });
});
