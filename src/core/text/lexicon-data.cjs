// WordNet's tables as wink-lexicon ships them, required as they are: an ES import of each would
// copy its 77,000 properties into a namespace object (lexicon-table.ts imports this object instead).
module.exports = {
  words: require('wink-lexicon/src/wn-words.js'),
  senses: require('wink-lexicon/src/wn-word-senses.js'),
  verbExceptions: require('wink-lexicon/src/wn-verb-exceptions.js'),
  nounExceptions: require('wink-lexicon/src/wn-noun-exceptions.js'),
  adjectiveExceptions: require('wink-lexicon/src/wn-adjective-exceptions.js'),
};
