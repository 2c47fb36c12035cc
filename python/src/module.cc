// tokenmill._tokenmill: the Python binding of the library (pybind11). It only turns Python
// arguments into the library's options and results into Python objects; training is
// lib/driver/training_run.h, encoding lib/model/encoder.h, as for the CLI. The Python side
// (tokenmill/__init__.py) re-exports it; python/README.md documents the API.
//
// Threads: the GIL is released while the library works (training, encode_batch,
// decode_batch); the hooks that must run Python code (the iterator of train_from_iterator, the
// Ctrl-C check) take it back for as long as they need it, on the thread that called in.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tbb/parallel_for.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/option_error.h"
#include "common/strings.h"
#include "common/version.h"
#include "driver/run_options.h"
#include "driver/training_run.h"
#include "model/add_special_tokens.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/units.h"
#include "pretokenize/presets.h"
#include "train/train_progress.h"

namespace py = pybind11;

namespace tokenmill::python {
namespace {

PyObject* g_error = nullptr;  // tokenmill.Error

// A library error as the Python exception its kind calls for, carrying the library's message
// (option names in it are in backquotes, and they are the keyword arguments' names).
[[noreturn]] void Raise(const absl::Status& status) {
  std::string message(status.message());
  // Where a keyword argument is not named as the library's option is.
  constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {{"`specials`", "`allowed_special`"}};
  for (const auto& [library, keyword] : kRenamed) {
    for (size_t at = message.find(library); at != std::string::npos; at = message.find(library, at)) {
      message.replace(at, library.size(), keyword);
      at += keyword.size();
    }
  }
  PyObject* type = g_error;
  if (IsOptionError(status)) {
    type = PyExc_ValueError;
  } else {
    switch (status.code()) {
      case absl::StatusCode::kInvalidArgument:
      case absl::StatusCode::kOutOfRange:
        type = PyExc_ValueError;
        break;
      case absl::StatusCode::kNotFound:
        type = PyExc_FileNotFoundError;
        break;
      case absl::StatusCode::kPermissionDenied:
        type = PyExc_PermissionError;
        break;
      case absl::StatusCode::kUnavailable:
      case absl::StatusCode::kDataLoss:
        type = PyExc_OSError;
        break;
      default:
        break;
    }
  }
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

template <typename T>
T Take(absl::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return *std::move(result);
}

void Check(const absl::Status& status) {
  if (!status.ok()) Raise(status);
}

// The bytes of a str (UTF-8) or bytes-like argument; the view lives as long as `object`.
std::string_view BytesOf(const py::handle& object, const char* what) {
  if (PyUnicode_Check(object.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(object.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return {data, static_cast<size_t>(size)};
  }
  if (PyBytes_Check(object.ptr())) {
    return {PyBytes_AS_STRING(object.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(object.ptr()))};
  }
  if (PyByteArray_Check(object.ptr())) {
    return {PyByteArray_AS_STRING(object.ptr()),
            static_cast<size_t>(PyByteArray_GET_SIZE(object.ptr()))};
  }
  throw py::type_error(StrCat(what, " must be str or bytes, not ",
                              Py_TYPE(object.ptr())->tp_name));
}

py::str Text(std::string_view bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::list IdList(const TokenId* ids, size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (list == nullptr) throw py::error_already_set();
  for (size_t i = 0; i < n; ++i) {
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromUnsignedLong(ids[i]));
  }
  return py::reinterpret_steal<py::list>(list);
}

std::vector<TokenId> Ids(const py::handle& ids) {
  std::vector<TokenId> out;
  for (const py::handle& id : ids) {
    const long long value = id.cast<long long>();
    if (value < 0 || value > static_cast<long long>(UINT32_MAX)) {
      throw py::value_error(StrCat("token id ", value, " is out of range"));
    }
    out.push_back(static_cast<TokenId>(value));
  }
  return out;
}

std::string PathOf(const py::handle& path) {
  py::object fspath = py::module_::import("os").attr("fspath");
  py::object p = fspath(path);
  if (PyBytes_Check(p.ptr())) return std::string(BytesOf(p, "path"));
  return p.cast<std::string>();
}

// ---- options from keyword arguments --------------------------------------------------------

// One option value as the library's text for it ("true", "30000", "cl100k"); lists give one
// text per element.
std::vector<std::string> OptionTexts(const std::string& name, const py::handle& value) {
  auto one = [&](const py::handle& v) -> std::string {
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_True ? "true" : "false";
    if (PyLong_Check(v.ptr())) return py::str(v).cast<std::string>();
    if (PyFloat_Check(v.ptr())) return py::repr(v).cast<std::string>();
    if (PyUnicode_Check(v.ptr())) return v.cast<std::string>();
    if (py::hasattr(v, "__fspath__")) return PathOf(v);
    throw py::type_error(StrCat("`", name, "`: expected a str, int, float or bool, not ",
                                Py_TYPE(v.ptr())->tp_name));
  };
  std::vector<std::string> out;
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) || PySet_Check(value.ptr())) {
    for (const py::handle& v : value) out.push_back(one(v));
  } else {
    out.push_back(one(value));
  }
  return out;
}

// Sets field `name` of `options` from `value`; false when `Options` has no such field.
template <typename Options>
bool SetField(Options& options, const std::string& name, const py::handle& value) {
  for (const OptionField<Options>& field : Options::Fields()) {
    if (field.name != name) continue;
    for (const std::string& text : OptionTexts(name, value)) {
      absl::Status s = field.parse(text, &options);
      if (!s.ok()) throw py::value_error(StrCat("`", name, "`: ", s.message()));
    }
    return true;
  }
  return false;
}

struct ParsedOptions {
  TrainingRunOptions run;
  GivenOptions given;           // for ApplyAlgorithmDefaults
  std::vector<std::string> set;  // option names, for a resume
  bool progress = true;
  bool bert_specials = true;
  bool ignore_corpus_change = false;
};

ParsedOptions ParseOptions(const py::kwargs& kwargs, const char* function) {
  ParsedOptions parsed;
  TrainingRunOptions& run = parsed.run;
  PreTokenizerConfig& split = run.corpus.pretokenizer;
  // Library defaults that differ from the CLI's: no file unless asked (the Tokenizer is
  // returned), progress as a bar on a terminal.
  run.corpus.progress = ProgressFormat::kAuto;
  bool preset_given = false, pattern_given = false;
  for (const auto& [key, value] : kwargs) {
    std::string name = key.cast<std::string>();
    if (value.is_none()) continue;  // the default
    if (name == "unit") name = "units";
    auto given = [&](const std::string& option) {
      parsed.given.insert(option);
      parsed.set.push_back(option);
    };
    if (name == "preset") {
      split.preset = value.cast<std::string>();
      preset_given = true;
      parsed.given.insert("preset");
      parsed.set.push_back("pretokenizer");
    } else if (name == "pattern") {
      split.pattern = value.cast<std::string>();
      pattern_given = true;
      parsed.given.insert("pattern");
      parsed.set.push_back("pretokenizer");
    } else if (name == "normalize") {
      const std::string form = value.cast<std::string>();
      if (form == "none") split.normalizer.form = NormalForm::kNone;
      else if (form == "nfc") split.normalizer.form = NormalForm::kNfc;
      else if (form == "nfkc") split.normalizer.form = NormalForm::kNfkc;
      else throw py::value_error(StrCat("`normalize`: '", form, "' is not none, nfc or nfkc"));
      parsed.given.insert("normalize");
      parsed.set.push_back("pretokenizer");
    } else if (name == "lowercase" || name == "strip_accents" || name == "split_digits" ||
               name == "metaspace_prefix") {
      const bool on = value.cast<bool>();
      if (name == "lowercase") split.normalizer.lowercase = on;
      if (name == "strip_accents") split.normalizer.strip_accents = on;
      if (name == "split_digits") split.split_digits = on;
      if (name == "metaspace_prefix") split.metaspace_prefix = on;
      parsed.set.push_back("pretokenizer");
    } else if (name == "progress") {
      if (PyBool_Check(value.ptr())) {
        parsed.progress = value.ptr() == Py_True;
        run.corpus.progress = parsed.progress ? ProgressFormat::kAuto : ProgressFormat::kNone;
      } else {
        const std::string format = value.cast<std::string>();
        absl::StatusOr<ProgressFormat> f = ParseProgressFormat(format);
        if (!f.ok()) throw py::value_error(StrCat("`progress`: ", f.status().message()));
        run.corpus.progress = *f;
        parsed.progress = *f != ProgressFormat::kNone;
      }
      parsed.set.push_back("progress");
    } else if (name == "bert_specials") {
      parsed.bert_specials = value.cast<bool>();
    } else if (name == "ignore_corpus_change") {
      parsed.ignore_corpus_change = value.cast<bool>();
    } else if (name == "inputs" || name == "pretokenizer") {
      throw py::type_error(StrCat(function, "() got an unexpected keyword argument '", name, "'"));
    } else if (SetField(run.corpus, name, value) || SetField(run.trainer, name, value) ||
               SetField(run, name, value)) {
      given(name);
    } else {
      throw py::type_error(StrCat(function, "() got an unexpected keyword argument '", name, "'"));
    }
  }
  if (preset_given && pattern_given) {
    throw py::value_error("give `preset` or `pattern`, not both");
  }
  if (pattern_given) split.preset = "custom";
  ApplyPresetNormalizer(&split);
  return parsed;
}

// ---- training --------------------------------------------------------------------------------

class Tokenizer;

// Ctrl-C while the library trains: Python's own SIGINT handler only records the signal; this
// asks Python, at most every 50 ms and on the thread that called in, whether one came, and
// keeps the KeyboardInterrupt (or whatever a handler raised) to raise once the run has stopped.
class InterruptCheck {
 public:
  bool Poll() {
    if (error_) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error_.emplace();
      return true;
    }
    return false;
  }
  // Keeps the Python error being raised now (the iterator's, or a signal handler's).
  void Keep() { error_.emplace(); }
  bool raised() const { return error_.has_value(); }
  [[noreturn]] void Rethrow() { throw *error_; }

 private:
  std::chrono::steady_clock::time_point last_{};
  std::optional<py::error_already_set> error_;
};

std::shared_ptr<Tokenizer> TokenizerOf(std::unique_ptr<Model> model);

std::shared_ptr<Tokenizer> RunTraining(TrainingRun run, const ParsedOptions& parsed,
                                       InterruptCheck& interrupt) {
  const ProgressFormat format = parsed.progress ? run.options().corpus.progress : ProgressFormat::kNone;
  absl::StatusOr<RunOutcome> outcome;
  {
    py::gil_scoped_release release;
    TrainProgress progress(format, 0, stderr);
    RunHooks hooks;
    hooks.stop_requested = [&] { return interrupt.Poll(); };
    hooks.on_step = [&](const TrainEvent& event) { progress.OnStep(event); };
    outcome = run.Run(hooks);
    progress.Finish();
  }
  if (interrupt.raised()) {
    // The checkpoint (if any) holds the run so far: say where, as the CLI does.
    if (outcome.ok() && !outcome->checkpoint_path.empty() && outcome->interrupted) {
      std::fprintf(stderr, "tokenmill: interrupted; checkpoint written to %s (tokenmill.resume(%s))\n",
                   outcome->checkpoint_path.c_str(), outcome->checkpoint_path.c_str());
    }
    interrupt.Rethrow();
  }
  if (!outcome.ok()) Raise(outcome.status());
  if (outcome->result.model == nullptr) throw py::value_error("training produced no model");
  return TokenizerOf(std::move(outcome->result.model));
}

std::vector<std::string> Files(const py::handle& files) {
  std::vector<std::string> out;
  if (PyUnicode_Check(files.ptr()) || PyBytes_Check(files.ptr()) || py::hasattr(files, "__fspath__")) {
    out.push_back(PathOf(files));
  } else {
    for (const py::handle& f : files) out.push_back(PathOf(f));
  }
  return out;
}

TrainingRun StartRun(ParsedOptions& parsed) {
  Check(ApplyAlgorithmDefaults(parsed.run, parsed.given, parsed.bert_specials));
  return Take(TrainingRun::Start(parsed.run));
}

std::shared_ptr<Tokenizer> Train(const py::object& files, const py::kwargs& kwargs) {
  ParsedOptions parsed = ParseOptions(kwargs, "train");
  parsed.run.corpus.inputs = Files(files);
  if (parsed.run.corpus.inputs.empty() && parsed.run.corpus.counts_files.empty()) {
    throw py::value_error("train(): no input files given");
  }
  TrainingRun run = StartRun(parsed);
  InterruptCheck interrupt;
  return RunTraining(std::move(run), parsed, interrupt);
}

// Documents are handed to the counting threads in batches of about this many bytes.
constexpr size_t kIteratorBatchBytes = size_t{1} << 20;

std::shared_ptr<Tokenizer> TrainFromIterator(const py::object& iterable, const py::kwargs& kwargs) {
  ParsedOptions parsed = ParseOptions(kwargs, "train_from_iterator");
  Check(ApplyAlgorithmDefaults(parsed.run, parsed.given, parsed.bert_specials));
  py::iterator it = py::iter(iterable);
  InterruptCheck interrupt;
  // Called by the library on this thread (GIL released around the run): takes the GIL back,
  // pulls items until a batch is full, and gives it up again.
  DocumentSource source = [&](DocumentBatch& batch) -> absl::StatusOr<bool> {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      interrupt.Keep();
      return absl::CancelledError("interrupted while reading the iterator");
    }
    auto add = [&](PyObject* item) -> bool {
      if (PyUnicode_Check(item)) {
        Py_ssize_t size = 0;
        const char* data = PyUnicode_AsUTF8AndSize(item, &size);
        if (data == nullptr) return false;
        batch.text.append(data, static_cast<size_t>(size));
      } else if (PyBytes_Check(item)) {
        batch.text.append(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
      } else if (PyByteArray_Check(item)) {
        batch.text.append(PyByteArray_AS_STRING(item),
                          static_cast<size_t>(PyByteArray_GET_SIZE(item)));
      } else {
        PyErr_Format(PyExc_TypeError,
                     "train_from_iterator: each item must be str or bytes (or a list of them), not %s",
                     Py_TYPE(item)->tp_name);
        return false;
      }
      batch.ends.push_back(batch.text.size());
      return true;
    };
    while (batch.text.size() < kIteratorBatchBytes) {
      PyObject* item = PyIter_Next(it.ptr());
      if (item == nullptr) {
        if (PyErr_Occurred()) {
          interrupt.Keep();
          return absl::CancelledError("the iterator raised an exception");
        }
        return false;
      }
      bool ok = true;
      if (PyList_Check(item) || PyTuple_Check(item)) {
        // Hugging Face's train_from_iterator also takes batches: lists of texts.
        PyObject* seq = PySequence_Fast(item, "");
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; ok && i < n; ++i) ok = add(PySequence_Fast_GET_ITEM(seq, i));
        Py_DECREF(seq);
      } else {
        ok = add(item);
      }
      Py_DECREF(item);
      if (!ok) {
        interrupt.Keep();
        return absl::CancelledError("a bad item");
      }
    }
    return true;
  };
  TrainingRun run = Take(TrainingRun::Start(parsed.run, source));
  return RunTraining(std::move(run), parsed, interrupt);
}

std::shared_ptr<Tokenizer> Resume(const py::object& checkpoint, const py::kwargs& kwargs) {
  ParsedOptions parsed = ParseOptions(kwargs, "resume");
  TrainingRun run = Take(TrainingRun::Resume(PathOf(checkpoint), parsed.run, parsed.set,
                                             parsed.ignore_corpus_change));
  InterruptCheck interrupt;
  return RunTraining(std::move(run), parsed, interrupt);
}

// ---- the tokenizer ---------------------------------------------------------------------------

SpecialPolicy PolicyOf(const py::handle& allowed) {
  if (PyUnicode_Check(allowed.ptr())) {
    const std::string s = allowed.cast<std::string>();
    if (s == "all") return SpecialPolicy::kAllow;
    if (s == "none") return SpecialPolicy::kAsText;
    if (s == "raise") return SpecialPolicy::kDisallow;
  }
  throw py::value_error(
      "allowed_special must be 'all' (special tokens in the text become their ids), 'none' "
      "(they are ordinary text) or 'raise' (finding one is an error)");
}

class Tokenizer {
 public:
  explicit Tokenizer(std::unique_ptr<Encoder> encoder) : encoder_(std::move(encoder)) {}

  const Model& model() const { return encoder_->model(); }

  static std::shared_ptr<Tokenizer> FromFile(const py::object& path) {
    const std::string p = PathOf(path);
    std::unique_ptr<Encoder> encoder;
    {
      py::gil_scoped_release release;
      absl::StatusOr<std::unique_ptr<Encoder>> loaded = LoadEncoder(p);
      if (!loaded.ok()) {
        py::gil_scoped_acquire gil;
        Raise(loaded.status());
      }
      encoder = *std::move(loaded);
    }
    return std::make_shared<Tokenizer>(std::move(encoder));
  }

  void Save(const py::object& path, const std::optional<std::string>& format) const {
    const std::string p = PathOf(path);
    absl::Status s;
    if (format) {
      ModelFormat f;
      if (*format == "hf") f = ModelFormat::kHfJson;
      else if (*format == "tiktoken") f = ModelFormat::kTiktoken;
      else if (*format == "vocab-txt") f = ModelFormat::kVocabTxt;
      else throw py::value_error(StrCat("`format`: '", *format, "' is not hf, tiktoken or vocab-txt"));
      py::gil_scoped_release release;
      s = SaveModelAs(model(), p, f);
    } else {
      py::gil_scoped_release release;
      s = SaveModel(model(), p);
    }
    Check(s);
  }

  py::list Encode(const py::handle& text, const py::handle& allowed) const {
    const std::string_view bytes = BytesOf(text, "text");
    const SpecialPolicy policy = PolicyOf(allowed);
    thread_local std::vector<TokenId> ids;
    ids.clear();
    absl::Status s;
    if (bytes.size() < (size_t{1} << 16)) {
      s = encoder_->EncodeTo(bytes, policy, ids);
    } else {
      py::gil_scoped_release release;
      s = encoder_->EncodeTo(bytes, policy, ids);
    }
    Check(s);
    return py::reinterpret_steal<py::list>(IntList(ids.data(), ids.size()));
  }

  py::list EncodeBatch(const py::handle& texts, const py::handle& allowed) const {
    const SpecialPolicy policy = PolicyOf(allowed);
    // The texts stay referenced by `items` while their bytes are read without the GIL.
    py::list items(py::reinterpret_borrow<py::object>(texts));
    std::vector<std::string_view> views;
    views.reserve(items.size());
    for (const py::handle& t : items) views.push_back(BytesOf(t, "each text"));
    absl::StatusOr<EncodedBatch> batch;
    {
      py::gil_scoped_release release;
      batch = encoder_->EncodeBatch(views, policy);
    }
    if (!batch.ok()) Raise(batch.status());
    // Millions of new lists would set off the cyclic garbage collector again and again (each
    // pass walking every list made so far): it waits until they are all made. Lists of ints
    // hold no cycles.
    const int gc_was_enabled = PyGC_Disable();
    PyObject* out = PyList_New(static_cast<Py_ssize_t>(batch->size()));
    if (out == nullptr) {
      if (gc_was_enabled) PyGC_Enable();
      throw py::error_already_set();
    }
    py::list result = py::reinterpret_steal<py::list>(out);
    for (size_t i = 0; i < batch->size(); ++i) {
      absl::Span<const TokenId> ids = (*batch)[i];
      PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), IntList(ids.data(), ids.size()));
    }
    if (gc_was_enabled) PyGC_Enable();
    return result;
  }

  py::bytes DecodeBytes(const py::handle& ids) const {
    const std::vector<TokenId> v = Ids(ids);
    std::string out;
    Check(encoder_->DecodeTo(v, out));
    return py::bytes(out);
  }

  py::str Decode(const py::handle& ids) const {
    const std::vector<TokenId> v = Ids(ids);
    std::string out;
    Check(encoder_->DecodeTo(v, out));
    return Text(out);
  }

  py::list DecodeBatch(const py::handle& batch) const {
    std::vector<std::vector<TokenId>> lists;
    for (const py::handle& ids : batch) lists.push_back(Ids(ids));
    std::vector<std::string> texts(lists.size());
    std::vector<absl::Status> status(lists.size());
    {
      py::gil_scoped_release release;
      tbb::parallel_for(size_t{0}, lists.size(), [&](size_t i) {
        status[i] = encoder_->DecodeTo(lists[i], texts[i]);
      });
    }
    py::list out;
    for (size_t i = 0; i < texts.size(); ++i) {
      Check(status[i]);
      out.append(Text(texts[i]));
    }
    return out;
  }

  size_t VocabSize() const { return model().VocabSize(); }

  // A token as Hugging Face's vocabulary shows it (Model::TokenTexts, made once).
  const std::string& TokenText(TokenId id) const { return Texts()[id]; }

  std::optional<std::string> IdToToken(int64_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= Texts().size() ||
        model().token_bytes()[static_cast<size_t>(id)].empty()) {
      return std::nullopt;
    }
    return TokenText(static_cast<TokenId>(id));
  }

  const StringMap<TokenId>& Vocab() const {
    if (!vocab_) {
      vocab_.emplace();
      const std::vector<std::string>& texts = Texts();
      for (size_t id = 0; id < texts.size(); ++id) {
        if (!model().token_bytes()[id].empty()) vocab_->emplace(texts[id], static_cast<TokenId>(id));
      }
    }
    return *vocab_;
  }

  std::optional<TokenId> TokenToId(const std::string& token) const {
    const StringMap<TokenId>& vocab = Vocab();
    auto it = vocab.find(token);
    if (it == vocab.end()) return std::nullopt;
    return it->second;
  }

  py::dict GetVocab() const {
    py::dict out;
    for (const auto& [text, id] : Vocab()) out[Text(text)] = id;
    return out;
  }

  py::list Explain(const py::handle& text, const py::handle& allowed) const {
    const std::string_view bytes = BytesOf(text, "text");
    std::vector<ExplainedPiece> pieces = Take(encoder_->Explain(bytes, PolicyOf(allowed)));
    py::list out;
    for (const ExplainedPiece& p : pieces) {
      py::dict d;
      d["text"] = Text(p.text);
      d["special"] = p.special_index >= 0
                         ? py::object(Text(model().special_tokens()[p.special_index].content))
                         : py::object(py::none());
      d["ids"] = IdList(p.ids.data(), p.ids.size());
      py::list tokens;
      for (TokenId id : p.ids) tokens.append(Text(TokenText(id)));
      d["tokens"] = tokens;
      d["whole_token"] = p.whole_token;
      py::list merges;
      for (const MergeStep& m : p.merges) {
        py::dict step;
        step["left"] = m.left;
        step["right"] = m.right;
        step["result"] = m.result;
        step["priority"] = m.priority;
        merges.append(step);
      }
      d["merges"] = merges;
      if (model().type() == ModelType::kWordPiece) {
        d["starts"] = p.piece_starts;
        d["unknown_reason"] = p.unknown_reason.empty() ? py::object(py::none())
                                                       : py::object(py::str(p.unknown_reason));
      }
      if (model().type() == ModelType::kUnigram && p.special_index < 0) {
        d["score"] = p.path_score;
        if (p.has_runner_up) {
          py::dict r;
          r["ids"] = IdList(p.runner_up.data(), p.runner_up.size());
          r["starts"] = p.runner_up_starts;
          r["score"] = p.runner_up_score;
          d["runner_up"] = r;
        } else {
          d["runner_up"] = py::none();
        }
      }
      out.append(d);
    }
    return out;
  }

  // Hugging Face's add_special_tokens: the number of tokens that were new.
  size_t AddSpecial(const std::vector<std::string>& tokens) {
    AddedSpecialTokens added = Take(AddSpecialTokens(model(), tokens));
    encoder_ = Take(Encoder::Create(std::unique_ptr<const Model>(std::move(added.model))));
    vocab_.reset();
    texts_.reset();
    ints_.clear();
    return added.added;
  }

  std::vector<std::string> SpecialTokens() const {
    std::vector<std::string> out;
    for (const SpecialToken& s : model().special_tokens()) out.push_back(s.content);
    return out;
  }

  std::string ModelName() const {
    switch (model().type()) {
      case ModelType::kBpe:
        return model().units().kind() == UnitKind::kByte ? "BPE (byte-level)" : "BPE (characters)";
      case ModelType::kWordPiece:
        return "WordPiece";
      case ModelType::kUnigram:
        return "Unigram";
    }
    return "?";
  }

  std::string Repr() const {
    return StrCat("<tokenmill.Tokenizer ", ModelName(), ", vocab_size=", VocabSize(), ">");
  }

 private:
  // A new list of the ids, each one of the tokenizer's own int objects (made once, then only
  // referenced again: no allocation per id).
  PyObject* IntList(const TokenId* ids, size_t n) const {
    if (ints_.empty()) {
      const size_t count = model().token_bytes().size();
      ints_.reserve(count);
      for (size_t id = 0; id < count; ++id) {
        ints_.push_back(py::reinterpret_steal<py::object>(PyLong_FromSize_t(id)));
      }
    }
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
    if (list == nullptr) throw py::error_already_set();
    for (size_t i = 0; i < n; ++i) {
      PyObject* v = ids[i] < ints_.size() ? ints_[ids[i]].inc_ref().ptr()
                                          : PyLong_FromUnsignedLong(ids[i]);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
    }
    return list;
  }

  const std::vector<std::string>& Texts() const {
    if (!texts_) texts_ = model().TokenTexts();
    return *texts_;
  }

  std::unique_ptr<Encoder> encoder_;
  mutable std::optional<std::vector<std::string>> texts_;
  mutable std::optional<StringMap<TokenId>> vocab_;
  mutable std::vector<py::object> ints_;  // ints_[id] is the int id
};

std::shared_ptr<Tokenizer> TokenizerOf(std::unique_ptr<Model> model) {
  return std::make_shared<Tokenizer>(Take(Encoder::Create(std::unique_ptr<const Model>(std::move(model)))));
}

}  // namespace
}  // namespace tokenmill::python

PYBIND11_MODULE(_tokenmill, m) {
  using namespace tokenmill::python;
  namespace tm = tokenmill;
  m.doc() = "tokenmill: fast, exact subword tokenizer training and encoding (C++ core)";
  m.attr("__version__") = std::string(tm::Version());
  static py::exception<void> error(m, "Error", PyExc_Exception);
  g_error = error.ptr();

  py::class_<Tokenizer, std::shared_ptr<Tokenizer>>(m, "Tokenizer")
      .def_static("from_file", &Tokenizer::FromFile, py::arg("path"),
                  "Loads a tokenizer.json, a .tiktoken (with its sidecar, or OpenAI's known "
                  "files) or a BERT vocab.txt.")
      .def("save", &Tokenizer::Save, py::arg("path"), py::arg("format") = py::none(),
           "Writes the tokenizer: format from the extension (.json, .tiktoken, .txt) or "
           "format='hf'|'tiktoken'|'vocab-txt'.")
      .def("encode", &Tokenizer::Encode, py::arg("text"), py::arg("allowed_special") = "all",
           "Token ids of a str (UTF-8) or bytes. allowed_special: 'all' (special tokens in the "
           "text become their ids, Hugging Face's behaviour), 'none' (ordinary text) or 'raise'.")
      .def("encode_batch", &Tokenizer::EncodeBatch, py::arg("texts"),
           py::arg("allowed_special") = "all",
           "encode() of every text, in parallel on all cores (the GIL is released).")
      .def("decode", &Tokenizer::Decode, py::arg("ids"),
           "The text of the ids (invalid UTF-8 replaced by U+FFFD; decode_bytes() gives the "
           "exact bytes).")
      .def("decode_bytes", &Tokenizer::DecodeBytes, py::arg("ids"))
      .def("decode_batch", &Tokenizer::DecodeBatch, py::arg("batch"),
           "decode() of every list of ids, in parallel (the GIL is released).")
      .def("token_to_id", &Tokenizer::TokenToId, py::arg("token"))
      .def("id_to_token", &Tokenizer::IdToToken, py::arg("id"))
      .def("get_vocab", &Tokenizer::GetVocab,
           "{token: id}, tokens as tokenizer.json writes them (byte-level text for byte-level "
           "models, <0xNN> for byte-fallback tokens).")
      .def("get_vocab_size", &Tokenizer::VocabSize)
      .def_property_readonly("vocab_size", &Tokenizer::VocabSize)
      .def_property_readonly("special_tokens", &Tokenizer::SpecialTokens)
      .def_property_readonly("model_type", &Tokenizer::ModelName)
      .def("explain", &Tokenizer::Explain, py::arg("text"), py::arg("allowed_special") = "all",
           "How the text was encoded: one dict per pre-tokenized piece (text, ids, tokens, "
           "merges applied; WordPiece: starts, unknown_reason; Unigram: score, runner_up).")
      .def("add_special_tokens", &Tokenizer::AddSpecial, py::arg("tokens"),
           "Adds special tokens (never split or merged) with ids after the vocabulary; returns "
           "how many were new.")
      .def("__repr__", &Tokenizer::Repr);

  m.def("train", &Train, py::arg("files"),
        "Trains a tokenizer on files (paths, folders, globs, .zst/.gz, .jsonl); keyword "
        "arguments are the library's options (vocab_size, preset, special_tokens, algorithm, "
        "unit, ...). Returns a Tokenizer; output='path' also writes it.");
  m.def("train_from_iterator", &TrainFromIterator, py::arg("iterator"),
        "Trains on the texts an iterator yields (str or bytes, or lists of them; each one is a "
        "document), streamed to the counting threads. Same keyword arguments as train().");
  m.def("resume", &Resume, py::arg("checkpoint"),
        "Continues an interrupted run from its checkpoint (vocab_size= extends a finished one).");
}
