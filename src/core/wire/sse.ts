/** Incremental server-sent-events decoder: feed text, get the `data:` payloads of complete events. */
export class SseDecoder {
  private buffer = '';

  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(this.buffer);
      if (!m) return out;
      const event = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const data = dataOf(event);
      if (data !== null) out.push(data);
    }
  }

  /** Whatever complete event is left when the stream ends without a final blank line. */
  flush(): string[] {
    const data = dataOf(this.buffer);
    this.buffer = '';
    return data === null ? [] : [data];
  }
}

function dataOf(event: string): string | null {
  const lines: string[] = [];
  for (const line of event.split(/\r?\n/)) {
    if (line.startsWith('data:')) lines.push(line.slice(line[5] === ' ' ? 6 : 5));
  }
  return lines.length ? lines.join('\n') : null;
}
