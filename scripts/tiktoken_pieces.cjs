// Usage: node scripts/tiktoken_pieces.cjs PATTERN TEXT '["candidate piece", ...]'
// (needs: npm install --prefix scripts/.peers tiktoken)
//
// Which pieces does tiktoken (Rust regex via WASM) cut? Vocabulary: the 256 bytes plus each
// candidate piece as a whole token; a piece tiktoken cuts that is in the vocabulary encodes as
// one token (tiktoken looks a whole piece up before merging).
const { Tiktoken } = require(__dirname + "/.peers/node_modules/tiktoken");
const pat = process.argv[2];
const text = process.argv[3];
const candidates = JSON.parse(process.argv[4]);
let lines = [];
const seen = new Set();
for (let b = 0; b < 256; b++) { lines.push(Buffer.from([b]).toString("base64") + " " + lines.length); seen.add(Buffer.from([b]).toString("hex")); }
for (const c of candidates) { const buf = Buffer.from(c, "utf8"); if (!seen.has(buf.toString("hex"))) { seen.add(buf.toString("hex")); lines.push(buf.toString("base64") + " " + lines.length); } }
const enc = new Tiktoken(lines.join("\n"), {}, pat);
const ids = enc.encode(text);
const out = [];
for (const id of ids) out.push(JSON.stringify(Buffer.from(enc.decode_single_token_bytes(id)).toString("utf8")));
console.log(out.join(" "));
enc.free();
