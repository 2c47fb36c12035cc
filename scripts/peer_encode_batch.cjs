#!/usr/bin/env node
// The peers' side of scripts/python_bench.sh: every line of FILE (with its newline) encoded by
// Hugging Face's encodeBatch (npm tokenizers, Rust core, its own thread pool) or by tiktoken's
// encode, one call per line (npm tiktoken has no batch call). Only the encode calls are timed
// (not Node's start, the vocabulary's loading or the file's reading). One JSON line per run:
// {"seconds": S, "tokens": N, "bytes": B}.
//   node scripts/peer_encode_batch.cjs hf TOKENIZER_JSON FILE [RUNS]
//   node scripts/peer_encode_batch.cjs tiktoken ENCODING_NAME FILE [RUNS]
"use strict";
const fs = require("fs");
const path = require("path");
const peers = path.join(__dirname, ".peers", "node_modules");

async function main() {
  const [kind, model, file, runsArg] = process.argv.slice(2);
  const runs = Number(runsArg || 1);
  const data = fs.readFileSync(file);
  const lines = [];
  for (let start = 0; start < data.length;) {
    let end = data.indexOf(10, start);
    end = end < 0 ? data.length : end + 1;
    lines.push(data.subarray(start, end).toString("utf8"));
    start = end;
  }
  let encodeAll;
  if (kind === "hf") {
    const { Tokenizer } = require(path.join(peers, "tokenizers"));
    const tok = Tokenizer.fromFile(model);
    encodeAll = async () => {
      let tokens = 0;
      // In chunks, so that the result objects of the whole corpus are not all alive at once.
      for (let i = 0; i < lines.length; i += 10000) {
        const encodings = await tok.encodeBatch(lines.slice(i, i + 10000), { addSpecialTokens: false });
        for (const e of encodings) tokens += e.getLength();
      }
      return tokens;
    };
  } else if (kind === "tiktoken") {
    const { get_encoding } = require(path.join(peers, "tiktoken"));
    const enc = get_encoding(model);
    encodeAll = async () => {
      let tokens = 0;
      for (const line of lines) tokens += enc.encode(line, "all").length;
      return tokens;
    };
  } else {
    console.error("usage: peer_encode_batch.cjs hf|tiktoken TOKENIZER_JSON|ENCODING FILE [RUNS]");
    process.exit(2);
  }
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    const tokens = await encodeAll();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    console.log(JSON.stringify({ seconds, tokens, bytes: data.length }));
  }
}

main().catch((error) => {
  console.error(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
