#!/usr/bin/env node
// Hugging Face's Unigram (npm tokenizers@0.23.2, Rust core) for the Unigram parity check and
// benchmark (scripts/hf_unigram_parity.sh, scripts/unigram_bench.sh):
//
//   node scripts/hf_unigram.cjs train CORPUS OUT.json [VOCAB]
//     new Tokenizer(Unigram.empty()), setNormalizer(nfkcNormalizer()),
//     setPreTokenizer(metaspacePreTokenizer()) and setDecoder(metaspaceDecoder()) (their
//     defaults: replacement "▁", prepend_scheme "always", split true: SentencePiece's dummy
//     prefix and whitespace split), then train([CORPUS]) and save(OUT.json). The npm binding
//     takes no trainer options (Tokenizer.train(files) uses the model's default trainer), so this
//     is HF's default UnigramTrainer: vocab 8000, 2 sub-iterations, shrinking factor 0.75, max
//     piece length 16, seed size 1,000,000, no special tokens, no <unk> (unk_id null), every
//     character kept (no coverage), no byte fallback. VOCAB, when given, must be 8000 (exit 2
//     otherwise). HF reads CORPUS line by line keeping each "\n", so "\n" is a character it
//     learns. Prints "train_s=S vocab=N" on stderr.
//   node scripts/hf_unigram.cjs encode TOKENIZER.json FILE [--no-newline] [--count] [--time]
//     Each line of FILE, with its "\n" (the last line: as it ends), is encoded (encodeBatch, no
//     special tokens added) and its ids printed on one line, as `tokenmill encode` prints them.
//     --no-newline: each line is encoded without its "\n" (what spm_encode sees).
//     --count: prints "tokens=T lines=L unk_lines=U unk_tokens=K" instead of the ids. A model
//       without <unk> (HF's default trainer makes one) cannot encode a character it never saw:
//       HF throws. With --count such a line is encoded instead by a copy of the model with a
//       "<unk>" piece appended (score: the lowest score - 10, unk_id set; one <unk> per run of
//       unknown characters, as HF's Unigram fuses them); U and K count those lines and <unk>s.
//       Without --count the error is fatal.
//     --time: the time of the encodeBatch calls alone on stderr, "encode_s=S bytes=B tokens=T".
"use strict";
const fs = require("fs");
const path = require("path");
const hf = require(path.join(__dirname, ".peers", "node_modules", "tokenizers"));

function readLines(file, keepNewline) {
  const data = fs.readFileSync(file);
  const lines = [];
  for (let start = 0; start < data.length;) {
    let end = data.indexOf(10, start);
    end = end < 0 ? data.length : end + 1;
    const stop = !keepNewline && data[end - 1] === 10 ? end - 1 : end;
    lines.push(data.subarray(start, stop).toString("utf8"));
    start = end;
  }
  return { bytes: data.length, lines };
}

// The same tokenizer with "<unk>" appended to the vocabulary and unk_id pointing at it.
function withUnk(file) {
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  const model = json.model;
  if (model.type !== "Unigram" || model.unk_id !== null && model.unk_id !== undefined) return null;
  const lowest = model.vocab.reduce((m, [, score]) => Math.min(m, score), 0);
  model.unk_id = model.vocab.length;
  model.vocab.push(["<unk>", lowest - 10]);
  return { tokenizer: hf.Tokenizer.fromString(JSON.stringify(json)), unkId: model.unk_id };
}

async function main() {
  const [command, a, b, ...rest] = process.argv.slice(2);
  if (command === "train" && a && b && rest.length <= 1) {
    if (rest.length === 1 && rest[0] !== "8000") {
      console.error("hf_unigram.cjs: the npm binding of tokenizers 0.23.2 takes no trainer options; " +
                    "its UnigramTrainer's vocab is 8000 (asked: " + rest[0] + ")");
      process.exit(2);
    }
    const tokenizer = new hf.Tokenizer(hf.Unigram.empty());
    tokenizer.setNormalizer(hf.nfkcNormalizer());
    tokenizer.setPreTokenizer(hf.metaspacePreTokenizer());
    tokenizer.setDecoder(hf.metaspaceDecoder());
    const start = process.hrtime.bigint();
    tokenizer.train([a]);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    tokenizer.save(b);
    console.error(`train_s=${seconds.toFixed(3)} vocab=${tokenizer.getVocabSize()}`);
    return;
  }
  if (command === "encode" && a && b) {
    const unknown = rest.filter((f) => !["--no-newline", "--count", "--time"].includes(f));
    if (unknown.length > 0) throw new Error(`unknown flag ${unknown[0]}`);
    const count = rest.includes("--count");
    const tokenizer = hf.Tokenizer.fromFile(a);
    const { bytes, lines } = readLines(b, !rest.includes("--no-newline"));
    const options = { addSpecialTokens: false };
    const begin = process.hrtime.bigint();
    let ids;
    try {
      ids = (await tokenizer.encodeBatch(lines, options)).map((e) => e.getIds());
    } catch (e) {
      if (!count) throw e;
      ids = null;  // some line has a character the model cannot encode: line by line below
    }
    let unkLines = 0, unkTokens = 0;
    if (ids === null) {
      const fallback = withUnk(a);
      if (fallback === null) throw new Error("encoding failed and the model has an unk_id");
      ids = [];
      for (const line of lines) {
        let lineIds;
        try {
          lineIds = (await tokenizer.encode(line, null, options)).getIds();
        } catch (e) {
          lineIds = (await fallback.tokenizer.encode(line, null, options)).getIds();
          unkLines++;
          unkTokens += lineIds.filter((id) => id === fallback.unkId).length;
        }
        ids.push(lineIds);
      }
    }
    const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
    let tokens = 0;
    for (const lineIds of ids) tokens += lineIds.length;
    if (count) {
      console.log(`tokens=${tokens} lines=${lines.length} unk_lines=${unkLines} unk_tokens=${unkTokens}`);
    } else {
      const out = [];
      let size = 0;
      for (const lineIds of ids) {
        const line = lineIds.join(" ") + "\n";
        out.push(line);
        size += line.length;
        if (size > 1 << 20) {
          fs.writeSync(1, out.join(""));
          out.length = 0;
          size = 0;
        }
      }
      if (out.length > 0) fs.writeSync(1, out.join(""));
    }
    if (rest.includes("--time")) {
      console.error(`encode_s=${seconds.toFixed(3)} bytes=${bytes} tokens=${tokens}`);
    }
    return;
  }
  console.error("usage: hf_unigram.cjs train CORPUS OUT.json [8000] | " +
                "encode TOKENIZER.json FILE [--no-newline] [--count] [--time]");
  process.exit(2);
}

main().catch((e) => {
  console.error(`hf_unigram.cjs: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
