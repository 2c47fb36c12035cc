#!/usr/bin/env node
// Encodes a file with a peer tokenizer and prints the ids the way `tokenmill encode` does:
// one line of space-separated ids per input line (the line's '\n' included in its text), or
// one line for the whole file with --whole.
//
//   node scripts/peer_encode.cjs tiktoken ENCODING_NAME FILE [--whole]
//   node scripts/peer_encode.cjs hf TOKENIZER_JSON FILE [--whole]
// --time also prints, on stderr, the time spent in the peer's encode calls alone (no start-up,
// no vocabulary loading, no file reading, no output): "encode_s=S bytes=B tokens=T MB/s=R".
// --no-output skips printing the ids (for timing).
//
// Peers come from scripts/.peers/node_modules (scripts/install_peers.sh puts them there).
// Special tokens in the text become their ids (tiktoken: allowed_special = "all"; Hugging
// Face: added tokens are always matched), as with `tokenmill encode --specials allow`.
"use strict";
const fs = require("fs");
const path = require("path");
const peers = path.join(__dirname, ".peers", "node_modules");

async function main() {
  const [kind, model, file, ...rest] = process.argv.slice(2);
  if (!kind || !model || !file) {
    console.error("usage: peer_encode.cjs tiktoken|hf ENCODING|TOKENIZER_JSON FILE [--whole]");
    process.exit(2);
  }
  const whole = rest.includes("--whole");
  const time = rest.includes("--time");
  const noOutput = rest.includes("--no-output");
  let encode;
  if (kind === "tiktoken") {
    const { get_encoding } = require(path.join(peers, "tiktoken"));
    const enc = get_encoding(model);
    encode = async (text) => enc.encode(text, "all");
  } else if (kind === "hf") {
    const { Tokenizer } = require(path.join(peers, "tokenizers"));
    const tok = Tokenizer.fromFile(model);
    encode = async (text) => (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
  } else {
    console.error(`unknown peer '${kind}'`);
    process.exit(2);
  }
  const data = fs.readFileSync(file);
  const texts = [];
  if (whole) {
    texts.push(data);
  } else {
    let start = 0;
    while (start < data.length) {
      let end = data.indexOf(10, start);
      end = end < 0 ? data.length : end + 1;
      texts.push(data.subarray(start, end));
      start = end;
    }
  }
  let out = [];
  let size = 0;
  const flush = () => {
    fs.writeSync(1, out.join(""));
    out = [];
    size = 0;
  };
  const strings = texts.map((bytes) => bytes.toString("utf8"));
  let seconds = 0;
  let tokens = 0;
  for (const text of strings) {
    const start = process.hrtime.bigint();
    const ids = await encode(text);
    seconds += Number(process.hrtime.bigint() - start) / 1e9;
    tokens += ids.length;
    if (noOutput) continue;
    const line = Array.prototype.join.call(ids, " ") + "\n";
    out.push(line);
    size += line.length;
    if (size > 1 << 20) flush();
  }
  flush();
  if (time) {
    const mbps = data.length / 1e6 / seconds;
    console.error(`encode_s=${seconds.toFixed(3)} bytes=${data.length} tokens=${tokens} MB/s=${mbps.toFixed(3)}`);
  }
}

main().catch((e) => {
  console.error(`peer_encode: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
