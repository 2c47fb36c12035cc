// Usage: node scripts/tiktoken_codepoint_pieces.cjs QWEN2_SIDECAR CODEPOINTS_FILE > OUT
// (needs: scripts/install_peers.sh, which installs tiktoken into scripts/.peers)
//
// The pieces tiktoken's own pre-tokenizer (Rust regex via WASM) cuts strings holding given code
// points into, for gpt2, cl100k_base and o200k_base (the patterns tiktoken ships, pat_str of
// tiktoken/encoders/*.json) and for qwen2 (the pattern of QWEN2_SIDECAR, run by tiktoken's
// regex engine). CODEPOINTS_FILE: one hexadecimal code point per line ('#' starts a comment).
// Each code point X is put in every context of CONTEXTS below ("@" stands for X).
//
// How pieces are read out of tiktoken: the vocabulary holds the 256 bytes and every substring
// (by bytes) of the strings encoded, each as a whole token. tiktoken looks every piece its
// regex cuts up as a whole first, so each piece encodes as exactly one token, and the tokens'
// bytes are the pieces.
//
// Output: a header, the contexts (hex of the template's bytes, "40" = X), then one line per
// (preset, range of consecutive listed code points whose pieces have the same lengths in every
// context): "PRESET FIRST LAST L|L|..." with one field per context: the byte lengths of the
// pieces, comma-separated.
const fs = require("fs");
const peers = __dirname + "/.peers/node_modules/tiktoken";
const { Tiktoken } = require(peers);

const CONTEXTS = ["@", "@@", "a@", "@a", "A@", "@A", "a@b", " @", "@ ", " @a", "1@2", "@1",
  ".@", "@.", "\n@", "@\n", "@'s", "'@", "@\u0301", "\u4e2d@", "@ @"];

const qwen2 = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const patterns = [
  ["gpt2", require(peers + "/encoders/gpt2.json").pat_str],
  ["cl100k", require(peers + "/encoders/cl100k_base.json").pat_str],
  ["o200k", require(peers + "/encoders/o200k_base.json").pat_str],
  ["qwen2", qwen2.pattern],
];
const cps = [];
for (const line of fs.readFileSync(process.argv[3], "utf8").split("\n")) {
  const t = line.replace(/#.*/, "").trim();
  if (t) cps.push(parseInt(t, 16));
}
cps.sort((a, b) => a - b);

const texts = [];  // texts[i][c]: the bytes of context c around cps[i]
for (const cp of cps) {
  const x = String.fromCodePoint(cp);
  texts.push(CONTEXTS.map((t) => Buffer.from(t.split("@").join(x), "utf8")));
}
// The vocabulary: all bytes, then every substring of every text.
const seen = new Set();
const lines = [];
const add = (buf) => {
  const key = buf.toString("latin1");
  if (seen.has(key)) return;
  seen.add(key);
  lines.push(buf.toString("base64") + " " + lines.length);
};
for (let b = 0; b < 256; b++) add(Buffer.from([b]));
for (const row of texts) {
  for (const buf of row) {
    for (let i = 0; i < buf.length; i++) {
      for (let j = i + 1; j <= buf.length; j++) add(buf.subarray(i, j));
    }
  }
}
const ranks = lines.join("\n");

const version = require(peers + "/package.json").version;
console.log("# Pieces tiktoken " + version + " cuts, per preset and code point range: produced by");
console.log("#   node scripts/tiktoken_codepoint_pieces.cjs tests/data/qwen2.json CODEPOINTS_FILE");
console.log("# (tests/data/README.md). Fields: PRESET FIRST LAST then, per context, the byte lengths");
console.log("# of the pieces. Contexts (hex; 40 stands for the code point):");
console.log("contexts " + CONTEXTS.map((t) => Buffer.from(t, "utf8").toString("hex")).join(" "));
for (const [name, pattern] of patterns) {
  const enc = new Tiktoken(ranks, {}, pattern);
  const results = texts.map((row) => row.map((buf) => {
    const ids = enc.encode(buf.toString("utf8"));
    const lengths = [];
    let total = 0;
    for (const id of ids) {
      const piece = Buffer.from(enc.decode_single_token_bytes(id));
      lengths.push(piece.length);
      total += piece.length;
    }
    if (total !== buf.length) throw new Error("pieces do not cover the text");
    return lengths.join(",");
  }).join("|"));
  enc.free();
  for (let i = 0; i < cps.length;) {
    let j = i;
    while (j + 1 < cps.length && cps[j + 1] === cps[j] + 1 && results[j + 1] === results[i]) ++j;
    const hex = (v) => v.toString(16).toUpperCase();
    console.log(name + " " + hex(cps[i]) + " " + hex(cps[j]) + " " + results[i]);
    i = j + 1;
  }
}
