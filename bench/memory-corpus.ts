// The memory bench's conversation: a deterministic (seeded) chat of 600 user turns over 24 sessions,
// each session on its own date, with the facts of memory-facts.ts planted among everyday small
// talk. The filler names the same people and things the facts do, as real chat would.
import { type Fact, FACTS } from './memory-facts.js';

export interface Turn {
  /** The session's date: every message of the turn is stamped on it. */
  at: Date;
  content: string;
}

export interface Planted extends Fact {
  /** The turn (0-based) whose user message carries the fact; its seq is 2 * turn + 1. */
  turn: number;
  seq: number;
}

export interface Corpus {
  turns: Turn[];
  facts: Planted[];
}

export const SESSIONS = 24;
export const TURNS_PER_SESSION = 25;

/** mulberry32: small, fast, and the same on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildCorpus(seed = 32): Corpus {
  const rand = prng(seed);
  const dates = sessionDates(rand);
  const slots = placeFacts(rand);
  const filler = fillerMaker(rand);
  const turns: Turn[] = [];
  const facts: Planted[] = [];
  for (let t = 0; t < SESSIONS * TURNS_PER_SESSION; t++) {
    const session = Math.floor(t / TURNS_PER_SESSION);
    const at = new Date(dates[session]!.getTime() + (t % TURNS_PER_SESSION) * 4 * 60_000);
    const slot = slots.get(t);
    turns.push({ at, content: slot ? wrap(rand, filler, slot.text) : filler(1 + Math.floor(rand() * 3)) });
    if (slot?.fact) facts.push({ ...slot.fact, turn: t, seq: 2 * t + 1 });
  }
  return { turns, facts };
}

/** A session every 3 to 7 days from 2 September 2023, each starting in the evening. */
function sessionDates(rand: () => number): Date[] {
  const out: Date[] = [];
  let day = Date.UTC(2023, 8, 2, 19, 0);
  for (let s = 0; s < SESSIONS; s++) {
    out.push(new Date(day));
    day += (3 + Math.floor(rand() * 5)) * 86_400_000;
  }
  return out;
}

/**
 * Which turn carries which planted sentence: the facts in a shuffled order, spread over the
 * sessions; a lead in the turn before its fact; a fact told relative to another in the session
 * after its anchor's.
 */
function placeFacts(rand: () => number): Map<number, { text: string; fact?: Fact }> {
  const slots = new Map<number, { text: string; fact?: Fact }>();
  const free = (t: number) => !slots.has(t) && !slots.has(t - 1) && !slots.has(t + 1);
  const pick = (session: number, room: number): number => {
    for (let tries = 0; tries < 500; tries++) {
      const t = session * TURNS_PER_SESSION + 1 + Math.floor(rand() * (TURNS_PER_SESSION - 1 - room));
      if (free(t) && (!room || free(t + 1))) return t;
    }
    throw new Error(`no room in session ${session}`);
  };
  const sessionOf = new Map<string, number>();
  const order = shuffle(rand, FACTS.filter((f) => !f.after));
  order.forEach((f, i) => {
    const session = Math.floor((i * (SESSIONS - 1)) / order.length);
    if (f.id) sessionOf.set(f.id, session);
    if (f.lead) {
      const t = pick(session, 1);
      slots.set(t, { text: f.lead });
      slots.set(t + 1, { text: f.fact, fact: f });
    } else {
      slots.set(pick(session, 0), { text: f.fact, fact: f });
    }
  });
  for (const f of FACTS.filter((x) => x.after)) slots.set(pick(sessionOf.get(f.after!)! + 1, 0), { text: f.fact, fact: f });
  return slots;
}

function shuffle<T>(rand: () => number, xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** A planted sentence with small talk around it, as people bury news in a message. */
function wrap(rand: () => number, filler: (n: number) => string, text: string): string {
  const r = rand();
  if (r < 0.3) return text;
  if (r < 0.6) return `${filler(1)} ${text}`;
  if (r < 0.85) return `${text} ${filler(1)}`;
  return `${filler(1)} ${text} ${filler(1)}`;
}

const SLOT: Record<string, string[]> = {
  day: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'yesterday', 'this morning', 'last night'],
  person: ['Dario', 'Felix', 'Rosalind', 'Ngozi', 'Casimir', 'Ingrid', 'Anselm', 'Consuelo', 'my neighbour', 'a guy at work', 'the woman at the bakery', 'my boss'],
  food: ['risotto', 'a tray of roasted vegetables', 'banana bread', 'dumplings', 'a huge pot of chili', 'fish tacos', 'shakshuka', 'pad thai', 'a lemon tart', 'sourdough', 'mushroom stroganoff', 'ramen'],
  show: ['that Danish crime series', 'a documentary about octopuses', 'the baking competition', 'an old Hitchcock film', 'a sci-fi show about a generation ship', 'the new season of the comedy about lawyers', 'a nature series about deserts'],
  weather: ['pouring with rain', 'weirdly warm', 'foggy all day', 'freezing', 'windy enough to knock the bins over', 'bright and crisp', 'muggy and grey'],
  chore: ['sort out the recycling', 'clean the gutters', 'fix the squeaky hinge on the wardrobe', 'file the tax paperwork', 'defrost the freezer', 'reorganise the spice drawer', 'wash the car', 'return the library books'],
  place: ['the farmers market', 'the hardware store', 'the big park by the river', 'the new cafe on the corner', 'the supermarket', 'the post office', 'the garden centre', 'the museum'],
  feeling: ['exhausted', 'oddly cheerful', 'a bit restless', 'completely wiped out', 'calm for once', 'grumpy', 'pretty content', 'anxious about nothing in particular'],
  thing: ['the printer', 'the dishwasher', 'my laptop', 'the washing machine', 'the wifi', 'the car radio', 'the kettle', 'my headphones'],
  work: ['a budget review', 'three back-to-back meetings', 'the quarterly report', 'onboarding a new hire', 'a client presentation', 'a very long spreadsheet', 'a deadline that moved twice'],
  activity: ['a long walk', 'a bike ride', 'a yoga class', 'a board game night', 'a picnic', 'a trip to the cinema', 'a swim', 'some gardening'],
};

const TEMPLATES = [
  'It was {weather} {day}, so we mostly stayed in.',
  'I made {food} for dinner and there are leftovers for days.',
  'We watched {show} and I have opinions.',
  'I really need to {chore} this week.',
  '{person} and I went to {place} and spent far too long there.',
  'Honestly I feel {feeling} today.',
  '{thing} broke again, I swear it does it on purpose.',
  'Work was mostly {work}.',
  'Thinking about {activity} this weekend if the weather holds.',
  'Do you have any tips for staying focused in the afternoon?',
  'I keep meaning to read more but then I just scroll on my phone.',
  '{person} sent me the funniest video of a goat on a trampoline.',
  'Traffic on the ring road was awful {day}.',
  'I tried a new recipe for {food} and it actually worked.',
  'We should plan {activity} with {person} soon.',
  'The kids next door were practising the drums again.',
  'I finally got around to the job of trying to {chore}.',
  'Can you suggest something light to cook after a long day?',
  'I had the strangest dream about a train that never stopped.',
  'The heating came on for the first time this season.',
  'I bought new running shoes and my feet are grateful.',
  '{person} lent me a book and I am only on chapter two.',
  'My back is sore from sitting at the desk all day.',
  'It feels like the week went by in a blur.',
  'I am trying to drink more water and less coffee, with mixed results.',
  'We had {food} at {place} and it was better than expected.',
  'Sometimes I wonder if I should take a proper holiday.',
  'The garden is a mess after all that wind.',
  'I spent {day} on {work} and my brain is mush.',
  'Is it normal for {thing} to make a clicking noise?',
  'I was {feeling} after {activity}.',
  '{person} is coming round for coffee on {day}.',
  'Any idea how long you can keep cooked rice in the fridge?',
  'I signed up for a pottery class and then chickened out.',
  'We rearranged the living room and now I keep walking into the sofa.',
  'There was a fox in the street at midnight, just sitting there.',
  'I forgot my umbrella, naturally, on the one day it was {weather}.',
  'I want to get better at saying no to extra work.',
  'The neighbours are having their roof redone and the noise is constant.',
  'I cleaned out my inbox and found emails from two years ago.',
  'We ran out of milk and nobody noticed until breakfast.',
  'Felt {feeling} all afternoon for no reason.',
  'I should call {person} back, I have been putting it off.',
  'What do you think about keeping a to-do list on paper instead of an app?',
  'The bus was late and then two came at once.',
];

/** `n` sentences of small talk, drawn from the templates with their slots filled. */
function fillerMaker(rand: () => number): (n: number) => string {
  const one = (xs: readonly string[]) => xs[Math.floor(rand() * xs.length)]!;
  const sentence = () => {
    const s = one(TEMPLATES).replace(/\{(\w+)\}/g, (_, k: string) => one(SLOT[k]!));
    return s[0]!.toUpperCase() + s.slice(1);
  };
  // Never the same template twice in one message.
  return (n) => {
    const out = new Set<string>();
    while (out.size < n) out.add(sentence());
    return [...out].join(' ');
  };
}
