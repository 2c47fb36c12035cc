#include "train/train_progress.h"

#include "absl/strings/str_format.h"
#include "common/byte_level.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string Clock(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "--:--";
  long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return absl::StrFormat("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%ld:%02ld", s / 60, s % 60);
}

}  // namespace

std::string ShowBytes(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += absl::StrFormat("\\x%02x", c);
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      // Keep a complete UTF-8 sequence; escape stray bytes.
      size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      bool whole = len > 0 && i + len <= bytes.size();
      for (size_t k = 1; whole && k < len; ++k) {
        whole = (static_cast<unsigned char>(bytes[i + k]) & 0xc0) == 0x80;
      }
      if (whole) {
        out.append(bytes.substr(i, len));
        i += len - 1;
      } else {
        out += absl::StrFormat("\\x%02x", c);
      }
    }
  }
  return out;
}

bool TrainProgress::OnStep(const TrainEvent& event) {
  done_ = event.steps_done;
  planned_ = event.steps_planned;
  if (!event.replayed) {
    eta_.Observe(event.steps_done, event.work,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  if (event.pieces > 0) {
    // A round-based trainer (Unigram): every round is drawn, and logged with --verbose.
    rounds_ = true;
    pieces_ = event.pieces;
    log_likelihood_ = event.log_likelihood;
    if (log_every_ > 0) {
      if (drawn_ && format_ == ProgressFormat::kBar) std::fputc('\n', out_);
      drawn_ = false;
      std::fprintf(out_, "round %zu/%zu: %zu pieces, log-likelihood %.6g%s\n", event.steps_done,
                   event.steps_planned, event.pieces, event.log_likelihood,
                   event.replayed ? " [resumed]" : "");
    }
    if (format_ != ProgressFormat::kNone) Draw(false);
    return true;
  }
  const LearnedMerge* merge = event.merge;
  if (merge != nullptr && log_every_ > 0 && event.steps_done % log_every_ == 0) {
    if (drawn_ && format_ == ProgressFormat::kBar) std::fputc('\n', out_);
    drawn_ = false;
    std::fprintf(out_, "merge %zu/%zu: '%s' + '%s' -> '%s' (count %llu)%s\n", event.steps_done,
                 event.steps_planned, ShowBytes(merge->left).c_str(),
                 ShowBytes(merge->right).c_str(), ShowBytes(merge->token).c_str(),
                 static_cast<unsigned long long>(merge->count), event.replayed ? " [resumed]" : "");
  }
  if (format_ == ProgressFormat::kNone) return true;
  if (merge != nullptr) last_token_.assign(merge->token);
  auto now = std::chrono::steady_clock::now();
  auto interval = format_ == ProgressFormat::kBar ? std::chrono::milliseconds(100)
                                                  : std::chrono::milliseconds(1000);
  if (now - last_draw_ >= interval) {
    last_draw_ = now;
    Draw(false);
  }
  return true;
}

void TrainProgress::Draw(bool final) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  double eta = eta_.RemainingSeconds(planned_);
  if (rounds_) {
    if (format_ == ProgressFormat::kJson) {
      std::fprintf(out_,
                   "{\"stage\":\"train\",\"round\":%zu,\"planned\":%zu,\"pieces\":%zu,"
                   "\"log_likelihood\":%.17g,\"eta_s\":%.1f%s}\n",
                   done_, planned_, pieces_, log_likelihood_, final ? 0.0 : eta,
                   final ? ",\"done\":true" : "");
    } else {
      std::fprintf(out_, "\rtraining: EM round %zu of about %zu  %zu pieces  log-likelihood %.6g  "
                   "ETA %s\x1b[K",
                   done_, planned_, pieces_, log_likelihood_, Clock(final ? 0.0 : eta).c_str());
      drawn_ = true;
    }
    std::fflush(out_);
    return;
  }
  if (format_ == ProgressFormat::kJson) {
    std::fprintf(out_,
                 "{\"stage\":\"train\",\"merges\":%zu,\"planned\":%zu,\"merges_per_s\":%.1f,"
                 "\"eta_s\":%.1f,\"token\":%s%s}\n",
                 done_, planned_, rate, final ? 0.0 : eta,
                 JsonString(BytesToByteLevel(last_token_)).c_str(),
                 final ? ",\"done\":true" : "");
  } else {
    constexpr int kWidth = 30;
    int filled = planned_ > 0 ? static_cast<int>(kWidth * std::min(done_, planned_) / planned_) : 0;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::string token = ShowBytes(last_token_);
    if (token.size() > 24) {
      size_t cut = 24;
      while (cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xc0) == 0x80) --cut;
      token = token.substr(0, cut) + "...";
    }
    std::fprintf(out_, "\rtraining [%s] %zu/%zu merges  %.0f/s  ETA %s  '%s'\x1b[K", bar.c_str(),
                 done_, planned_, rate, Clock(eta).c_str(), token.c_str());
    drawn_ = true;
  }
  std::fflush(out_);
}

void TrainProgress::Finish() {
  if (format_ == ProgressFormat::kNone) return;
  Draw(true);
  if (format_ == ProgressFormat::kBar) std::fputc('\n', out_);
  drawn_ = false;
}

}  // namespace tokenmill
