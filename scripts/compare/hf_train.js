// Trains a byte-level BPE tokenizer with Hugging Face tokenizers (npm binding, Rust core), the
// way its users do: BPE.empty(), the ByteLevel pre-tokenizer without prefix space and with the
// GPT-2 regex, and the model's default BpeTrainer (vocab 30000, min_frequency 0, no special
// tokens; the npm API of 0.23.2 exposes no trainer options). Writes tokenizer.json.
// With a fourth argument, a character-level BPE instead (no ByteLevel): the pre-tokenizer
// "metaspace" (Metaspace, prepend_scheme always, split) or "whitespace" (Whitespace), and a
// fifth, "nfkc", sets the NFKC normalizer.
// Usage: node hf_train.js NODE_MODULES_DIR CORPUS OUTPUT.json [metaspace|whitespace [nfkc]]
'use strict';
const path = require('path');

const [modules, corpus, output, pre, normalizer] = process.argv.slice(2);
if (!output) {
  console.error('usage: node hf_train.js NODE_MODULES_DIR CORPUS OUTPUT.json [metaspace|whitespace [nfkc]]');
  process.exit(2);
}
const hf = require(path.join(modules, 'tokenizers'));
const tokenizer = new hf.Tokenizer(hf.BPE.empty());
if (pre === undefined) {
  tokenizer.setPreTokenizer(hf.byteLevelPreTokenizer(false, true));
} else if (pre === 'metaspace') {
  tokenizer.setPreTokenizer(hf.metaspacePreTokenizer());
} else if (pre === 'whitespace') {
  tokenizer.setPreTokenizer(hf.whitespacePreTokenizer());
} else {
  console.error(`hf_train.js: unknown pre-tokenizer '${pre}'`);
  process.exit(2);
}
if (normalizer === 'nfkc') {
  tokenizer.setNormalizer(hf.nfkcNormalizer());
} else if (normalizer !== undefined) {
  console.error(`hf_train.js: unknown normalizer '${normalizer}'`);
  process.exit(2);
}
tokenizer.train([corpus]);
tokenizer.save(output);
