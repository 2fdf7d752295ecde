// The part of wink-lemmatizer that lexicon-table.ts uses (it ships no types).
declare module 'wink-lemmatizer' {
  const lemmatize: { verb(w: string): string; noun(w: string): string; adjective(w: string): string };
  export default lemmatize;
}
