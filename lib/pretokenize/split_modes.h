// The pre-tokenizers that are no pattern of OpenAI's (PreTokenizerConfig presets "metaspace",
// "whitespace", "bert" and "none"), and the digit split that may follow any pre-tokenizer.
//
//  - metaspace (SentencePiece, Hugging Face's Metaspace with split): the text has been prepared
//    (text_prep.h: spaces are "▁" and a "▁" may lead); a piece starts at each "▁" (Hugging
//    Face's MergedWithNext), so "▁a▁▁b" is "▁a", "▁", "▁b".
//  - whitespace (Hugging Face's Whitespace, `\w+|[^\w\s]+` with Rust's Unicode \w and \s):
//    runs of word characters and runs of other non-space characters; whitespace is dropped, so
//    the pieces do not concatenate to the text (the one exception to pretokenizer.h's contract)
//    and decoding cannot restore it.
//  - bert (Hugging Face's BertPreTokenizer, pre_tokenizers/bert.rs): whitespace (White_Space,
//    Rust's char::is_whitespace) separates pieces and is dropped, and every punctuation
//    character is a piece of its own: ASCII punctuation (Rust's is_ascii_punctuation: all of
//    !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~, symbols included) and general category P* (ICU's,
//    Unicode 15.0; Hugging Face's table is older, see normalizer.h). Like whitespace, the pieces
//    do not concatenate to the text. BERT's normalizer (normalizer.h) usually runs first.
//  - none: no split; the text is one piece.
// Each byte that is not well-formed UTF-8 is a piece of its own in all four, as pretokenizer.h
// says.
//
// Digits (split_digits): every \p{N} character becomes a piece of its own (Hugging Face's
// Digits with individual_digits: Rust's char::is_numeric, which is \p{N}).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {

std::unique_ptr<PreTokenizer> MakeMetaspaceSplitter();
absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeWhitespaceSplitter();
std::unique_ptr<PreTokenizer> MakeBertSplitter();
std::unique_ptr<PreTokenizer> MakeNoSplitter();
// `inner`, then every \p{N} character of its pieces alone.
std::unique_ptr<PreTokenizer> MakeDigitSplitter(std::unique_ptr<PreTokenizer> inner);

}  // namespace tokenmill
