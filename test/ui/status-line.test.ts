import { describe, expect, it } from 'vitest';
import type { ChatStatus } from '../../src/ui/chat-controller.js';
import { statusLine } from '../../src/ui/status-line.js';

const status: ChatStatus = {
  kind: 'entity',
  id: '0a1b2c3d-0000-4000-8000-000000000001',
  label: 'a-rather-long-entity-name',
  model: 'mgpt-1-27b',
  backend: 'remote',
  window: { tokens: 31_812, budget: 32_000, blocks: 142 },
  transcript: { messages: 12_345, tokens: 4_567_890, cap: 10_000_000 },
  readOnly: true,
  balanceUsd: 1234.5,
};

const width = (l: { text: string; busy: string }) => [...(l.text + l.busy)].length;

describe('status line', () => {
  it('is the full form on a wide terminal, with the model', () => {
    const l = statusLine(status, false, 200);
    expect(l.text).toBe(
      'a-rather-long-entity-name · mgpt-1-27b · remote · window [██████████] 31812/32000 tok, 142 blocks · transcript 12345 msgs, 4567.9k tok · read-only · $1,234.50',
    );
    expect(statusLine(status, true, 200).busy).toBe('  replying… (Ctrl-C cancels)');
  });

  it("gauges the window against the model's context when that binds before the budget, and says so", () => {
    const bound = { ...status, window: { tokens: 1_200, budget: 1_500, byModel: true, blocks: 9 } };
    expect(statusLine(bound, false, 200).text).toContain('window [████████░░] 1200/1500 tok (model limit), 9 blocks');
    expect(statusLine(bound, false, 99).text).toContain('window 80% 1.2k/1.5k (model)');
  });

  it('takes its compact form under 100 columns and never exceeds the width, busy or not', () => {
    expect(statusLine(status, false, 99).text).toContain('window 99% 31.8k/32k · 12345 msgs');
    for (const columns of [99, 80, 60, 40, 20, 5]) {
      for (const busy of [false, true]) {
        const l = statusLine(status, busy, columns);
        expect(width(l), `${columns} columns, busy ${busy}`).toBeLessThan(columns);
        if (busy && columns >= 20) expect(l.busy).toBe(' · replying…');
      }
    }
    expect(statusLine({ ...status, label: 'ada', window: undefined, readOnly: false }, true, 70)).toEqual({
      text: 'ada · mgpt-1-27b · remote · 12345 msgs · $1,234.50',
      busy: ' · replying…',
    });
  });
});
