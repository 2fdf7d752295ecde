// The memory bench's floor: what a plain retriever finds on the same data. BM25 (k1 1.2, b 0.75)
// over single messages, with the entity's own statistics, words lower-cased and unstemmed, a
// short English stop list; each hit brings the message before and after it; hits in rank order
// until the next line would pass the budget. Lines are written as mgpt writes recalled lines, so
// both are counted by the same tokenizer.
import type { TokenEstimator } from '../src/core/text/tokens.js';

export interface FloorMessage {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
}

const STOP = new Set(
  'a an and are as at be but by did do does for from had has have he her his how i in is it its me my of on or our she so that the their them they this to was we were what when where which who why will with you your'.split(' '),
);

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w));
}

/** An index of one entity's messages, built once and asked many questions. */
export class Bm25Floor {
  private readonly docs: Array<{ m: FloorMessage; tf: Map<string, number>; len: number }>;
  private readonly df = new Map<string, number>();
  private readonly avgLen: number;
  private readonly bySeq: Map<number, FloorMessage>;

  constructor(messages: readonly FloorMessage[]) {
    this.docs = messages.map((m) => {
      const tf = new Map<string, number>();
      const ws = words(m.content);
      for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const w of tf.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      return { m, tf, len: ws.length };
    });
    this.avgLen = this.docs.reduce((n, d) => n + d.len, 0) / Math.max(1, this.docs.length);
    this.bySeq = new Map(messages.map((m) => [m.seq, m]));
  }

  /** The lines recalled for `question` from messages before `beforeSeq`, within `budget` tokens. */
  recall(tok: TokenEstimator, question: string, beforeSeq: number, budget: number): { text: string; tokens: number } {
    const chosen = new Map<number, string>();
    let used = 0;
    for (const hit of this.rank(question, beforeSeq)) {
      for (const seq of [hit.seq - 1, hit.seq, hit.seq + 1]) {
        const m = this.bySeq.get(seq);
        if (!m || seq >= beforeSeq || chosen.has(seq)) continue;
        const line = `#${m.seq} ${m.role} (${m.createdAt.slice(0, 16).replace('T', ' ')}): ${m.content}`;
        const n = tok.count(line) + 1;
        if (used + n > budget) return { text: ordered(chosen), tokens: used };
        chosen.set(seq, line);
        used += n;
      }
    }
    return { text: ordered(chosen), tokens: used };
  }

  private rank(question: string, beforeSeq: number): FloorMessage[] {
    const q = [...new Set(words(question))];
    const n = this.docs.length;
    const scored = this.docs
      .filter((d) => d.m.seq < beforeSeq)
      .map((d) => {
        let s = 0;
        for (const w of q) {
          const f = d.tf.get(w);
          if (!f) continue;
          const df = this.df.get(w)!;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.len) / this.avgLen));
        }
        return { m: d.m, s };
      })
      .filter((x) => x.s > 0);
    return scored.sort((a, b) => b.s - a.s || a.m.seq - b.m.seq).map((x) => x.m);
  }
}

function ordered(chosen: Map<number, string>): string {
  return [...chosen.entries()].sort((a, b) => a[0] - b[0]).map(([, l]) => l).join('\n');
}
