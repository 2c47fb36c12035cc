#!/usr/bin/env node
// Hugging Face's WordPiece (npm tokenizers, Rust core) for the parity checks and benchmarks:
//
//   node scripts/hf_wordpiece.cjs train CORPUS OUT.json
//     new Tokenizer(WordPiece.empty()) with bertNormalizer() (its defaults: clean text,
//     Chinese characters, lowercase, accents stripped as lowercase says) and bertPreTokenizer(),
//     trained with the model's default WordPieceTrainer (vocab 30000, min_frequency 0, no
//     special tokens, prefix ##): the setup issue 21 names. Prints "train_s=S" on stderr.
//   node scripts/hf_wordpiece.cjs encode MODEL FILE [--lowercase] [--time] [--no-output]
//     MODEL: a tokenizer.json (Tokenizer.fromFile), or BERT's vocab.txt (WordPiece.fromFile
//     with bertNormalizer({lowercase, stripAccents: lowercase}) and bertPreTokenizer()). Each
//     line of FILE (with its "\n") is encoded (encodeBatch, no special tokens added), ids
//     printed one line per input line as `tokenmill encode` prints them. --time: the time of
//     the encodeBatch call alone, "encode_s=S bytes=B tokens=T MB/s=R", on stderr.
"use strict";
const fs = require("fs");
const path = require("path");
const hf = require(path.join(__dirname, ".peers", "node_modules", "tokenizers"));

async function main() {
  const [command, a, b, ...rest] = process.argv.slice(2);
  if (command === "train" && a && b) {
    const tokenizer = new hf.Tokenizer(hf.WordPiece.empty());
    tokenizer.setNormalizer(hf.bertNormalizer());
    tokenizer.setPreTokenizer(hf.bertPreTokenizer());
    tokenizer.setDecoder(hf.wordPieceDecoder());
    const start = process.hrtime.bigint();
    tokenizer.train([a]);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    tokenizer.save(b);
    console.error(`train_s=${seconds.toFixed(3)}`);
    return;
  }
  if (command === "encode" && a && b) {
    let tokenizer;
    if (a.endsWith(".json")) {
      tokenizer = hf.Tokenizer.fromFile(a);
    } else {
      const lowercase = rest.includes("--lowercase");
      const model = await hf.WordPiece.fromFile(a, { unkToken: "[UNK]" });
      tokenizer = new hf.Tokenizer(model);
      tokenizer.setNormalizer(hf.bertNormalizer({ lowercase, stripAccents: lowercase }));
      tokenizer.setPreTokenizer(hf.bertPreTokenizer());
    }
    const data = fs.readFileSync(b);
    const lines = [];
    for (let start = 0; start < data.length;) {
      let end = data.indexOf(10, start);
      end = end < 0 ? data.length : end + 1;
      lines.push(data.subarray(start, end).toString("utf8"));
      start = end;
    }
    const begin = process.hrtime.bigint();
    const encodings = await tokenizer.encodeBatch(lines, { addSpecialTokens: false });
    const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
    let tokens = 0;
    const out = [];
    for (const e of encodings) {
      const ids = e.getIds();
      tokens += ids.length;
      if (!rest.includes("--no-output")) out.push(ids.join(" ") + "\n");
    }
    if (out.length > 0) fs.writeSync(1, out.join(""));
    if (rest.includes("--time")) {
      console.error(`encode_s=${seconds.toFixed(3)} bytes=${data.length} tokens=${tokens} ` +
                    `MB/s=${(data.length / 1e6 / seconds).toFixed(2)}`);
    }
    return;
  }
  console.error("usage: hf_wordpiece.cjs train CORPUS OUT.json | encode MODEL FILE [--lowercase] [--time] [--no-output]");
  process.exit(2);
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
