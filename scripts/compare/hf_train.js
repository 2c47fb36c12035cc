// Trains a byte-level BPE tokenizer with Hugging Face tokenizers (npm binding, Rust core), the
// way its users do: BPE.empty(), the ByteLevel pre-tokenizer without prefix space and with the
// GPT-2 regex, and the model's default BpeTrainer (vocab 30000, min_frequency 0, no special
// tokens; the npm API of 0.23.2 exposes no trainer options). Writes tokenizer.json.
// Usage: node hf_train.js NODE_MODULES_DIR CORPUS OUTPUT.json
'use strict';
const path = require('path');

const [modules, corpus, output] = process.argv.slice(2);
if (!output) {
  console.error('usage: node hf_train.js NODE_MODULES_DIR CORPUS OUTPUT.json');
  process.exit(2);
}
const hf = require(path.join(modules, 'tokenizers'));
const tokenizer = new hf.Tokenizer(hf.BPE.empty());
tokenizer.setPreTokenizer(hf.byteLevelPreTokenizer(false, true));
tokenizer.train([corpus]);
tokenizer.save(output);
