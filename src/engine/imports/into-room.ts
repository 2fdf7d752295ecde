import { BadRequestError } from '../../core/errors.js';
import type { EntityRow } from '../../store/types.js';

/** What an --into run would add, and to what. */
export interface IntoRoom {
  /** The --into argument as given. */
  ref: string;
  /** The entity, or undefined when the run makes it. */
  row: EntityRow | undefined;
  adding: number;
  /** Its transcript cap (a new entity's: the engine's default). */
  cap: number;
  /** The highest cap the engine allows (engine.maxTranscriptCap). */
  max: number;
}

/**
 * Refuses an --into run whose tokens would bring the transcript to its cap: there the entity is
 * read-only for good, and the conversations past it would be skipped. Says by how much, and the
 * way in: a higher cap where the engine allows one, or fewer conversations.
 */
export function refuseOverCap(r: IntoRoom): void {
  const held = r.row?.transcriptTokens ?? 0;
  if (r.adding === 0 || held + r.adding < r.cap) return;
  const n = (x: number) => x.toLocaleString('en-US');
  const needed = held + r.adding + 1;
  const name = JSON.stringify(r.ref);
  const fewer = 'import fewer conversations (--only, --since)';
  const raise =
    needed > r.max
      ? `This engine allows caps up to ${n(r.max)} (engine.maxTranscriptCap, MGPT_MAX_TRANSCRIPT_CAP: its operator can raise it); or ${fewer}.`
      : r.row
        ? `Raise its cap first: mgpt entities update ${r.row.id} --cap ${needed} (this engine allows up to ${n(r.max)}); or ${fewer}.`
        : `Create it and raise its cap first: mgpt entities create --name ${name}, then mgpt entities update ${name} --cap ${needed} (this engine allows up to ${n(r.max)}); or ${fewer}.`;
  // The way in is part of the message, not a hint: an HTTP answer carries the message to a remote CLI.
  throw new BadRequestError(
    `--into ${name}: the import would add ${n(r.adding)} tokens to a transcript of ${n(held)}, reaching its cap of ${n(r.cap)} tokens ` +
      `(a transcript at its cap is read-only); nothing was imported. ${raise}`,
  );
}
