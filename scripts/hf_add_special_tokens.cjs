#!/usr/bin/env node
// Hugging Face's add_special_tokens (npm tokenizers@0.23.2, Rust core) against tokenmill's
// `add-special-tokens`, for scripts/hf_add_special_tokens.sh:
//
//   node scripts/hf_add_special_tokens.cjs ORIGINAL.json ADDED.json TEXTS TOKEN...
//
// HF loads ORIGINAL (the tokenizer.json before) and calls addSpecialTokens([TOKEN...]) on it;
// HF loads ADDED (what tokenmill wrote). Checked: every TOKEN has the same id in both
// (tokenToId); each line of TEXTS, with its "\n" (the last line: as it ends), encodes (no
// post-processor tokens) to the same ids in both, and decodes (special tokens kept) to the same
// text. Prints the ids of each line on stdout, one line each, as `tokenmill encode` prints
// them, and on stderr what HF numbered (its vocabulary sizes before, each token's id) and a
// summary. Exit 1 on a difference, 2 on bad usage.
"use strict";
const fs = require("fs");
const path = require("path");

// The peers' copy (scripts/install_peers.sh), else wherever NODE_PATH finds it.
function loadTokenizers() {
  try {
    return require(path.join(__dirname, ".peers", "node_modules", "tokenizers"));
  } catch (e) {
    return require("tokenizers");
  }
}

function readLines(file) {
  const data = fs.readFileSync(file);
  const lines = [];
  for (let start = 0; start < data.length;) {
    let end = data.indexOf(10, start);
    end = end < 0 ? data.length : end + 1;
    lines.push(data.subarray(start, end).toString("utf8"));
    start = end;
  }
  return lines;
}

async function main() {
  const [original, added, textsFile, ...tokens] = process.argv.slice(2);
  if (!original || !added || !textsFile || tokens.length === 0) {
    console.error("usage: hf_add_special_tokens.cjs ORIGINAL.json ADDED.json TEXTS TOKEN...");
    process.exit(2);
  }
  const hf = loadTokenizers();
  const theirs = hf.Tokenizer.fromFile(original);
  const sizeBefore = theirs.getVocabSize(false), sizeWithAdded = theirs.getVocabSize(true);
  const idsBefore = tokens.map((t) => theirs.tokenToId(t));
  theirs.addSpecialTokens(tokens);
  const ours = hf.Tokenizer.fromFile(added);
  let differences = 0;
  const numbered = [];
  for (let i = 0; i < tokens.length; i++) {
    const a = theirs.tokenToId(tokens[i]), b = ours.tokenToId(tokens[i]);
    const was = idsBefore[i] === null ? "new" : `was ${idsBefore[i]}`;
    numbered.push(`${JSON.stringify(tokens[i])}=${a} (${was})`);
    if (a !== b) {
      console.error(`DIFF token ${JSON.stringify(tokens[i])}: HF's addSpecialTokens gives id ${a}, ` +
                    `tokenmill's file ${b}`);
      differences++;
    }
  }
  console.error(`HF before: vocab ${sizeBefore} (${sizeWithAdded} with added tokens); ` +
                `after addSpecialTokens: ${theirs.getVocabSize(true)}; ids ${numbered.join(", ")}`);
  const options = { addSpecialTokens: false };
  const lines = readLines(textsFile);
  const out = [];
  let ids = 0, differingLines = 0;
  for (let n = 0; n < lines.length; n++) {
    const a = (await theirs.encode(lines[n], null, options)).getIds();
    const b = (await ours.encode(lines[n], null, options)).getIds();
    ids += a.length;
    out.push(a.join(" ") + "\n");
    const sameIds = a.length === b.length && a.every((id, k) => id === b[k]);
    const textA = await theirs.decode(a, false), textB = await ours.decode(b, false);
    if (!sameIds || textA !== textB) {
      if (differingLines < 3) {
        console.error(`DIFF line ${n + 1} ${JSON.stringify(lines[n])}:\n  HF added: ${a.join(" ")}` +
                      ` -> ${JSON.stringify(textA)}\n  tokenmill: ${b.join(" ")} -> ` +
                      `${JSON.stringify(textB)}`);
      }
      differingLines++;
    }
  }
  fs.writeSync(1, out.join(""));
  differences += differingLines;
  console.error(`${lines.length} lines, ${ids} ids: ${differingLines} lines differ between HF's ` +
                `addSpecialTokens and tokenmill's file (ids or decoded text)`);
  process.exit(differences === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`hf_add_special_tokens.cjs: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
