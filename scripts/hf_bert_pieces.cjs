// Usage: node scripts/hf_bert_pieces.cjs FILE [--lowercase] [--strip-accents] [--special-token T]
// (needs: scripts/install_peers.sh, for npm tokenizers@0.23.2)
//
// The pieces Hugging Face's bertNormalizer (cleanText and handleChineseChars on, lowercase and
// stripAccents as the flags say) and bertPreTokenizer cut FILE (UTF-8, read as one text) into,
// one a line, escaped as `tokenmill pretokenize` escapes them, so that its output for
// `--preset bert` with the same flags compares with diff. With --special-token, T is cut out
// first and printed as "\special T" (as tokenmill does; Hugging Face's added tokens cut text
// the same way), and the text between is normalized and split on its own.
const tokenizers = require(__dirname + "/.peers/node_modules/tokenizers");
const [file, ...args] = process.argv.slice(2);
const flags = [];
let special = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--special-token" && i + 1 < args.length) special = args[++i];
  else if (args[i] === "--lowercase" || args[i] === "--strip-accents") flags.push(args[i]);
  else throw new Error(`unknown argument ${args[i]}`);
}
const normalizer = tokenizers.bertNormalizer({
  cleanText: true,
  handleChineseChars: true,
  stripAccents: flags.includes("--strip-accents"),
  lowercase: flags.includes("--lowercase"),
});
const pretokenizer = tokenizers.bertPreTokenizer();

// tokenmill pretokenize's escaping: \\, \n, \r, \t, \xHH for the other bytes below 0x20 and 0x7F.
function escape(piece) {
  return piece.replace(/[\\\x00-\x1f\x7f]/g, (c) => {
    if (c === "\\") return "\\\\";
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return "\\x" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
  });
}

const text = require("fs").readFileSync(file, "utf8");
const segments = special === null ? [text] : text.split(special);
const out = [];
segments.forEach((segment, i) => {
  if (i > 0) out.push("\\special " + escape(special) + "\n");
  if (segment === "") return;
  for (const [piece] of pretokenizer.preTokenizeString(normalizer.normalizeString(segment))) {
    out.push(escape(piece) + "\n");
  }
});
process.stdout.write(out.join(""));
