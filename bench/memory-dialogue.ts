// The memory bench's realistic conversation: two friends, Maya (the user side) and Jonah (the
// assistant side), chatting over 20 dated sessions, every message opened with its speaker's name,
// imported as a ChatGPT export so the messages keep the export's dates. The questions were written
// before the retriever was tuned on them, in the way people ask about a long chat: the answer is
// often the reply after the message their words match, they use other forms of the answer's words
// (drew for drawing, mentored for mentorship, road trip for roadtrip), they lean on names and
// words every message has, a "when" needs the message's own date, and one answer is only in an
// image's note. Other entities in the same database use the facts' words hundreds of times.
import { prng } from './memory-corpus.js';

export type Speaker = 'Maya' | 'Jonah';

export interface DialogueFact {
  kind: 'reply-after' | 'word-form' | 'date' | 'image' | 'names' | 'plain';
  /** Consecutive messages planted in one session; an image is `[caption]` after the text. */
  lines: Array<{ who: Speaker; text: string; image?: string }>;
  /** Which of `lines` holds the answer (it must reach the prompt); a date question also needs its date on that line. */
  answer: number;
  question: string;
}

const M = (text: string, image?: string) => ({ who: 'Maya' as const, text, ...(image ? { image } : {}) });
const J = (text: string) => ({ who: 'Jonah' as const, text });

export const DIALOGUE_FACTS: DialogueFact[] = [
  // The answer is the message after the one the question's words match (or two after).
  { kind: 'reply-after', lines: [M('We finally did it, we put in the papers to adopt a little girl through the agency.'), J("Honestly you two will be amazing parents, she's lucky already.")], answer: 1, question: "What does Jonah think about Maya's decision to adopt?" },
  { kind: 'reply-after', lines: [M('My sister asked me to be godmother to her twins.'), J("Say yes! You'd spoil them rotten with picture books.")], answer: 1, question: 'What did Jonah tell Maya when her sister asked her to be godmother?' },
  { kind: 'reply-after', lines: [J("I'm thinking of quitting the bakery job to go back to school."), M("Do it, nursing school would suit you, you're the calmest person I know.")], answer: 1, question: 'Which school did Maya suggest when Jonah talked about quitting the bakery?' },
  { kind: 'reply-after', lines: [M('What should I name the new puppy?'), J('Call him Pretzel, he is exactly the same colour.')], answer: 1, question: "What name did Jonah suggest for Maya's puppy?" },
  { kind: 'reply-after', lines: [M("I have the interview at the museum on Friday and I'm panicking."), J('Wear the green blazer and talk about the Vermeer exhibit you organised.')], answer: 1, question: 'What advice did Jonah give Maya for the museum interview?' },
  { kind: 'reply-after', lines: [J('My landlord is selling the building.'), M('You can stay in our spare room on Elmwood Avenue until you find something.')], answer: 1, question: 'Where did Maya offer Jonah a place to stay when his landlord sold the building?' },
  { kind: 'reply-after', lines: [M("Dad's retirement party is next month and I have to give a toast."), J('Open with the story about him driving the tractor into the pond.')], answer: 1, question: "What story did Jonah suggest for Maya's toast at her dad's retirement party?" },
  { kind: 'reply-after', lines: [M('Guess what, Theo proposed on the beach at sunset!'), J('No way!! Show me the ring!'), M("It's his grandmother's ring, a small sapphire in old gold.")], answer: 2, question: 'What ring did Theo propose to Maya with?' },
  { kind: 'reply-after', lines: [J('I ran my first marathon in Chicago on Sunday.'), M('Incredible! What was your time?'), J('Four hours and eleven minutes, and I cried at the finish line.')], answer: 2, question: "What was Jonah's time in the Chicago marathon?" },
  { kind: 'reply-after', lines: [M("The vet called about Biscuit's scan."), J('And? Is he okay?'), M("It's only a benign cyst, they'll remove it next week.")], answer: 2, question: "What did the vet find on Biscuit's scan?" },
  { kind: 'reply-after', lines: [J('I started volunteering at the animal shelter on Saturdays.'), M("That's so you. Which animals?"), J('Mostly the old cats nobody takes home; I brush them and read to them.')], answer: 2, question: 'What does Jonah do when he volunteers at the shelter?' },
  { kind: 'reply-after', lines: [M('Theo and I had our first big fight about moving.'), J('Oh no, what happened?'), M('He wants Denver for his job, I want to stay near my parents in Halifax.')], answer: 2, question: 'Why did Maya and Theo fight about moving?' },
  // Other forms of the answer's words.
  { kind: 'word-form', lines: [M('I drew a portrait of Grandpa Ruben from an old photo last night.')], answer: 0, question: 'What was Maya drawing from an old photo?' },
  { kind: 'word-form', lines: [J('Mrs. Adebayo mentored me through my first year at the bakery, I owe her everything.')], answer: 0, question: 'Who gave Jonah mentorship at the bakery?' },
  { kind: 'word-form', lines: [M('Theo and I are doing a road trip down the coast to Big Sur in June.')], answer: 0, question: 'Where are Maya and Theo going on their roadtrip?' },
  { kind: 'word-form', lines: [J('The compass tattoo on my forearm stands for never forgetting where home is.')], answer: 0, question: "What does Jonah's tattoo symbolize?" },
  { kind: 'word-form', lines: [J('I bought a secondhand cello from a retired orchestra player.')], answer: 0, question: 'What instrument did Jonah buy?' },
  { kind: 'word-form', lines: [M('Theo taught me how to make fresh pasta on Sunday.')], answer: 0, question: 'What did Theo teach Maya to cook?' },
  { kind: 'word-form', lines: [J("I wrote a short story about my grandmother's village and a magazine took it.")], answer: 0, question: 'What did Jonah write about that got published?' },
  { kind: 'word-form', lines: [M("We flew to Lisbon for my cousin's graduation.")], answer: 0, question: 'Which city did Maya fly to when her cousin graduated?' },
  { kind: 'word-form', lines: [J('The kids built a treehouse in the oak behind the garage.')], answer: 0, question: "What did Jonah's kids build?" },
  { kind: 'word-form', lines: [M('I chose the yellow tiles for the kitchen in the end.')], answer: 0, question: 'Which tiles did Maya choose for the kitchen?' },
  { kind: 'word-form', lines: [J('My brother Ezra babysits for us every other Friday.')], answer: 0, question: 'Who does the baby-sitting for Jonah?' },
  { kind: 'word-form', lines: [M('Theo made me a bookshelf out of old pallets for my birthday.')], answer: 0, question: "What did Theo make Maya's book shelf from?" },
  { kind: 'word-form', lines: [J('We went skate boarding at the old quarry park all afternoon.')], answer: 0, question: 'Where does Jonah go skateboarding?' },
  { kind: 'word-form', lines: [M('I caught a bass at Lake Mira, my first fish ever.')], answer: 0, question: 'What fish did Maya catch?' },
  { kind: 'word-form', lines: [J("I sang at my cousin Nadia's wedding, At Last, and didn't forget the words.")], answer: 0, question: 'What song did Jonah sing at the wedding?' },
  { kind: 'word-form', lines: [M("I've decided to leave the agency and go freelance.")], answer: 0, question: "What was Maya's decision about the agency?" },
  { kind: 'word-form', lines: [J('My daughter Lucy is obsessed with photographing bugs in the garden.')], answer: 0, question: "What is Lucy's photography obsession?" },
  { kind: 'word-form', lines: [M('The children at the library loved the puppet show I put on.')], answer: 0, question: 'What did the child audience at the library enjoy?' },
  // "When": the answer's line must carry its date.
  { kind: 'date', lines: [J('Mrs. Adebayo finally retired today, we threw her a party at the bakery.')], answer: 0, question: 'When did Mrs. Adebayo retire?' },
  { kind: 'date', lines: [M('I got my driving licence this morning, passed first time!')], answer: 0, question: 'When did Maya pass her driving test?' },
  { kind: 'date', lines: [J('Lucy lost her first tooth at breakfast today.')], answer: 0, question: 'When did Lucy lose her first tooth?' },
  { kind: 'date', lines: [M('Theo and I brought home a rescue greyhound this afternoon, we named him Biscuit.')], answer: 0, question: 'When did Maya get Biscuit?' },
  { kind: 'date', lines: [J('I signed the lease on the flat above the florist today.')], answer: 0, question: 'When did Jonah sign his new lease?' },
  { kind: 'date', lines: [M('Started my new job at the maritime museum this morning.')], answer: 0, question: 'When did Maya start at the maritime museum?' },
  // Only in an image's note.
  { kind: 'image', lines: [M('Look what I finished this weekend!', "Peggy's Cove lighthouse watercolour at dusk.jpg")], answer: 0, question: 'Which lighthouse did Maya paint?' },
  { kind: 'image', lines: [M('Here is what I made for Lucy.', 'three tier lemon cake with blueberry unicorn.jpg')], answer: 0, question: 'What flavour was the cake Maya baked for Lucy?' },
  // Names that are on every message, and words every message has.
  { kind: 'names', lines: [J('Lucy wants to be a marine biologist now, all because of the octopus documentary.')], answer: 0, question: 'What does Lucy want to be when she grows up?' },
  { kind: 'names', lines: [M("Theo's favourite band is Fleetwood Mac, he plays Rumours every Sunday.")], answer: 0, question: 'What music does Theo like?' },
  { kind: 'names', lines: [J('The kids are into Lego Technic this month, the whole floor is gears.')], answer: 0, question: "What are Jonah's kids into lately?" },
  { kind: 'names', lines: [M('My mum Rosa grows tomatoes and dahlias at her allotment.')], answer: 0, question: "What does Maya's mum grow?" },
  { kind: 'names', lines: [J('My wife Priya is a paramedic, she works nights mostly.')], answer: 0, question: 'What does Priya do for work?' },
  { kind: 'names', lines: [M('Theo is allergic to cats, which is why we went for a dog.')], answer: 0, question: 'What is Theo allergic to?' },
  { kind: 'names', lines: [J('Ezra moved to Montreal to study architecture.')], answer: 0, question: "Where did Jonah's brother Ezra move?" },
  { kind: 'names', lines: [M('I unwind with jigsaw puzzles, the thousand-piece ones.')], answer: 0, question: 'What does Maya like doing to relax?' },
  // Plain ones, which any retriever should keep finding.
  { kind: 'plain', lines: [J('Our car finally died, we replaced it with a red Kia Niro.')], answer: 0, question: 'What car did Jonah replace his old one with?' },
  { kind: 'plain', lines: [M("I'm learning Greek for the trip to Crete next spring.")], answer: 0, question: 'Which language is Maya learning?' },
  { kind: 'plain', lines: [J('Priya and I celebrated our tenth anniversary at a tapas place called Pintxo.')], answer: 0, question: 'Where did Jonah and Priya celebrate their anniversary?' },
  { kind: 'plain', lines: [M("Theo's sister Ines is getting married in Porto in August.")], answer: 0, question: "Where is Ines's wedding?" },
];

/** One message of the conversation as the export holds it. */
export interface DialogueMessage {
  who: Speaker;
  text: string;
  image?: string;
  at: Date;
}

export interface PlacedFact extends DialogueFact {
  /** The answer's seq in the imported entity (the conversation starts with Maya, so seq = index + 1). */
  seq: number;
  at: Date;
}

export interface Dialogue {
  messages: DialogueMessage[];
  facts: PlacedFact[];
}

export const DIALOGUE_SESSIONS = 20;
/** Messages a session has (Maya, then Jonah, alternating). */
const SESSION_MESSAGES = 30;

export function buildDialogue(seed = 43): Dialogue {
  const rand = prng(seed);
  const placed = placeInSessions(rand);
  const messages: DialogueMessage[] = [];
  const facts: PlacedFact[] = [];
  let day = Date.UTC(2023, 4, 8, 18, 30);
  for (let s = 0; s < DIALOGUE_SESSIONS; s++) {
    const at = (i: number) => new Date(day + i * 3 * 60_000);
    const start = messages.length;
    for (const f of placed[s] ?? []) plant(rand, messages, facts, f, at, start);
    while (messages.length - start < SESSION_MESSAGES) messages.push({ who: speakerAt(messages.length), text: smallTalk(rand, speakerAt(messages.length)), at: at(messages.length - start) });
    day += (4 + Math.floor(rand() * 10)) * 86_400_000;
  }
  return { messages, facts };
}

/** Maya writes the odd seqs (even indexes), Jonah the even ones. */
function speakerAt(index: number): Speaker {
  return index % 2 === 0 ? 'Maya' : 'Jonah';
}

/** The facts in a shuffled order, spread over every session but the last (the window shows that one). */
function placeInSessions(rand: () => number): DialogueFact[][] {
  const order = [...DIALOGUE_FACTS];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const out: DialogueFact[][] = [];
  order.forEach((f, i) => (out[Math.floor((i * (DIALOGUE_SESSIONS - 1)) / order.length)] ??= []).push(f));
  return out;
}

/** Small talk up to where the fact's first speaker talks, then the fact's lines, then a little more. */
function plant(rand: () => number, messages: DialogueMessage[], facts: PlacedFact[], f: DialogueFact, at: (i: number) => Date, start: number): void {
  const pad = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < pad || speakerAt(messages.length) !== f.lines[0]!.who; i++) messages.push({ who: speakerAt(messages.length), text: smallTalk(rand, speakerAt(messages.length)), at: at(messages.length - start) });
  f.lines.forEach((l, i) => {
    const when = at(messages.length - start);
    if (i === f.answer) facts.push({ ...f, seq: messages.length + 1, at: when });
    messages.push({ who: l.who, text: l.text, ...(l.image ? { image: l.image } : {}), at: when });
  });
}

const SMALL_TALK: Record<Speaker, string[]> = {
  Maya: [
    'Theo says hi, he is making soup again.',
    'The kids next door were shrieking in the paddling pool all afternoon.',
    'Work was all meetings today, I feel like a zombie.',
    'Do you like the new cafe by the station? I kind of like it.',
    'Theo and I watched a film about a heist, it was silly but fun.',
    'Biscuit chewed a slipper, of course it was my favourite one.',
    'I need to get better at replying to emails on time.',
    'It rained all day so we stayed in and played cards.',
    'My mum called, she wants us over for Sunday lunch.',
    'How are the kids doing with the new school routine?',
    'I like that we can just chat like this, it keeps me sane.',
    'Theo is away for work until Thursday, the flat is so quiet.',
    'I tried a yoga video and fell over twice.',
    'We had pizza on the sofa, no regrets.',
    'The museum is so busy this week with school groups and kids everywhere.',
    'I keep saying I will start running again.',
  ],
  Jonah: [
    'Ha, that sounds like a very Maya thing to do.',
    'The kids were up at six again, I need a holiday from my holiday.',
    'Priya says hello, she is on nights this week.',
    'Work at the bakery was busy, the sourdough sold out by ten.',
    'I like that idea, let me know how it goes.',
    'Lucy painted her nails green and then the cat.',
    'The kids want a dog now, thanks to you and Biscuit.',
    'Oh I totally get that, it has been a long week here too.',
    'We had a lazy Sunday, pancakes and cartoons with the kids.',
    'Honestly I like quiet weekends more every year.',
    'That is so good to hear, tell Theo congratulations from me.',
    'Priya and I finally finished that crime series, what an ending.',
    'The car made a weird noise again, I am ignoring it.',
    'Lucy asked me why the sky is blue and I had no idea.',
    'I like how you always find the bright side.',
    'Sounds like a plan, keep me posted.',
  ],
};

function smallTalk(rand: () => number, who: Speaker): string {
  const xs = SMALL_TALK[who];
  return xs[Math.floor(rand() * xs.length)]!;
}

/** The words of the facts that the other entities in the bench's database use hundreds of times. */
export const NOISE_WORDS = (
  'adopt adoption agency parents godmother twins school bakery quitting puppy name interview museum landlord building stay ' +
  'retirement party toast story ring proposed marathon time vet scan shelter volunteering fight moving drawing portrait photo ' +
  'mentor mentorship roadtrip coast tattoo symbol instrument cello teach pasta cook write story magazine fly graduation kids ' +
  'build treehouse tiles kitchen babysitting bookshelf skateboarding fish catch song wedding decision freelance photography ' +
  'children library retire driving test tooth greyhound lease job lighthouse paint cake flavour music band mum grow work ' +
  'allergic cats brother car language anniversary married'
).split(' ');

/**
 * Another entity's conversation (`n` messages of `NOISE_WORDS` and plain words): its statistics
 * must not change what Maya and Jonah's entity recalls.
 */
export function noiseMessages(seed: number, n: number): string[] {
  const rand = prng(seed);
  const plain = 'the a and it was then we really about some very with for'.split(' ');
  return Array.from({ length: n }, () => {
    const words = Array.from({ length: 10 + Math.floor(rand() * 8) }, (_, k) => (k % 2 ? plain : NOISE_WORDS)[Math.floor(rand() * (k % 2 ? plain.length : NOISE_WORDS.length))]);
    return words.join(' ');
  });
}
