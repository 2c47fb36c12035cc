// Counts the words of a text file as the trainers see them: each line (with its newline) is
// one document, split by the GPT-2 pre-tokenizer pattern; every piece is one word.
// Prints "BYTES WORDS". Usage: node count_words.js FILE
'use strict';
const fs = require('fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: node count_words.js FILE');
  process.exit(2);
}
const gpt2 = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const data = fs.readFileSync(file);
const text = data.toString('utf8');
let words = 0;
let start = 0;
while (start < text.length) {
  let end = text.indexOf('\n', start);
  end = end < 0 ? text.length : end + 1;
  const line = text.slice(start, end);
  gpt2.lastIndex = 0;
  while (gpt2.exec(line) !== null) words++;
  start = end;
}
console.log(`${data.length} ${words}`);
