declare const data: {
  words: Record<string, number>;
  senses: number[][];
  verbExceptions: Record<string, string>;
  nounExceptions: Record<string, string>;
  adjectiveExceptions: Record<string, string>;
};
export = data;
