// Encodes a whole file as one text with a peer encoder and reports how long the encode call
// alone took (file reading, Node start-up and vocabulary loading are not timed), so the peer's
// figure is its best case.
//   node encode_peer.js NODE_MODULES_DIR tiktoken ENCODING_NAME FILE   (npm tiktoken, e.g. cl100k_base)
//   node encode_peer.js NODE_MODULES_DIR hf TOKENIZER_JSON FILE        (npm tokenizers, Rust core)
// Prints one JSON line: {"seconds": S, "tokens": N, "bytes": B}.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [modules, kind, tokenizerName, file] = process.argv.slice(2);
  if (!file || (kind !== 'tiktoken' && kind !== 'hf')) {
    console.error('usage: node encode_peer.js NODE_MODULES_DIR tiktoken|hf ENCODING|TOKENIZER_JSON FILE');
    process.exit(2);
  }
  const data = fs.readFileSync(file);
  const text = data.toString('utf8');
  let tokens;
  let seconds;
  if (kind === 'tiktoken') {
    const { get_encoding } = require(path.join(modules, 'tiktoken'));
    const encoding = get_encoding(tokenizerName);
    const start = process.hrtime.bigint();
    tokens = encoding.encode(text, 'all').length;  // special tokens become their ids, like tokenmill's default
    seconds = Number(process.hrtime.bigint() - start) / 1e9;
    encoding.free();
  } else {
    const { Tokenizer } = require(path.join(modules, 'tokenizers'));
    const tokenizer = Tokenizer.fromFile(tokenizerName);
    const start = process.hrtime.bigint();
    const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
    tokens = encoding.getLength();
    seconds = Number(process.hrtime.bigint() - start) / 1e9;
  }
  console.log(JSON.stringify({ seconds, tokens, bytes: data.length }));
}

main().catch((error) => {
  console.error(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
