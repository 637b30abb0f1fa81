// mpsbench-meter: the energy and GPU activity (GPM) of whatever runs on this
// node's GPUs between a "start" and a "stop" on standard input, for
// mpsbench-sweep's farmer, which runs one per node around each configuration
// of a farmed application (issue 27). The figures and their rules are
// mpsbench's own (telemetry/: one background monitor per GPU reading NVML's
// energy counter, energy_meter.hpp's mean power between counter updates, two
// GPM samples per span).
//
// Protocol, one JSON object per line on standard output:
//   mpsbench-meter [--gpus UUID[,UUID...]]   (default: every GPU NVML lists)
//   At start: {"ready": true, "gpus": [{"index": I, "uuid": "GPU-..."}, ...]}
//     (index: NVML's, nvidia-smi's order), or {"ready": false, "reason": "..."} and exit 2 (no GPU could be
//     opened: NVML absent, an unknown UUID, a bad option).
//   Then commands on standard input, one per line (blank lines ignored):
//     start  begins a span: each GPU's monitor resumes and a GPM sample is taken per GPU, at once. A start
//            while a span is open begins it anew.
//     stop [AGO]  ends it and prints (AGO: seconds before this command at which the span ended, a number
//            from 0 to less than the span's length, so that the span ends at the farmer's last counter line,
//            not at the run's end after it: the energy of a teardown with no counted work stays out; the GPM
//            activity is still the mean up to this command)
//            {"span_s": S, "energy": {...}, "gpu_activity": {...},
//             "gpus": [{"uuid", "index", "energy": {...}, "gpu_activity": {...}}, ...]}
//            energy: {"available", "joules", "mean_power_w", "span_s", "uncertainty", "method", "reason"?}
//              (joules = mean power x S; span_s: the time between the first and last counter updates inside
//              the span, over which the mean power was metered; uncertainty: relative; summed over the GPUs
//              at the top, uncertainty weighted by joules, span_s the shortest);
//            gpu_activity: {"available", "sm_active", "sm_occupancy", "dram_bw", "tensor_active", "reason"?}
//              (percent; the mean over the GPUs at the top).
//            A figure that cannot be had is "available": false with a "reason" (no numbers), never a zero;
//            a span shorter than ~0.2 s holds too few counter updates for energy.
//     Anything else, or a stop without a span: {"error": "..."} and the meter goes on. A line is read up
//     to kMaxLine bytes (the rest of a longer one is skipped, and it is an error).
//   End of input: exit 0 (an open span is dropped).
//   Every line is ASCII JSON: bytes that are not UTF-8 (in an argument, a command, a path or a reason
//   NVML gives) become U+FFFD, so nothing the meter is given can make it fail to write a line. GPM
//   figures outside 0-100 % and an energy counter that rises faster than any GPU draws are a broken
//   counter: "available": false with the reason (telemetry/gpm_check.cpp, energy_meter.cpp). An
//   unexpected error still ends the meter with one line ({"ready": false, ...} or {"error": ...}), exit 3.
// MPSBENCH_FAKE_NVML=FILE.json makes it read scripted counters (telemetry/fake_counters.hpp), for tests.
#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/build_info.hpp"
#include "runtime/steady_clock.hpp"
#include "telemetry/gpu_monitor.hpp"

namespace {

using ojson = nlohmann::ordered_json;
using mpsb::GpmFigures;

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;
constexpr std::size_t kMaxLine = 4096;  // a command is a word: a longer line is no command
constexpr std::size_t kQuoted = 60;     // what an error quotes of a line it refuses

const char* const kHelp =
    "usage: mpsbench-meter [--gpus UUID[,UUID...]] [--version]\n"
    "\n"
    "Meters the energy (NVML's total energy counter) and GPM activity (SM active, SM occupancy, DRAM\n"
    "bandwidth, tensor active, percent) of this node's GPUs (default: every GPU NVML lists) between\n"
    "commands on standard input, one per line:\n"
    "  start   begin a span (each GPU's counter watched, one GPM sample per GPU)\n"
    "  stop    end it: one JSON line {\"span_s\", \"energy\", \"gpu_activity\", \"gpus\": [per GPU]}\n"
    "  stop S  end it S seconds before this command (0 <= S < the span's length)\n"
    "At start it prints {\"ready\": true, \"gpus\": [{\"index\", \"uuid\"}]} (or {\"ready\": false, \"reason\"}\n"
    "and exits 2). Figures that cannot be had are {\"available\": false, \"reason\"}. End of input: exit 0.\n"
    "The whole protocol: the comment at the top of harness/mpsbench_meter.cpp.\n";

struct Gpu {
  int index = 0;
  std::string uuid;
  std::unique_ptr<mpsb::GpuMonitor> monitor;
  std::unique_ptr<mpsb::GpmSample> first;
  std::string first_problem;
};

// One protocol line. ASCII only, and bytes that are not UTF-8 replaced: nlohmann's default (strict) throws
// on them, which ended the meter with SIGABRT on a non-UTF-8 argument.
std::string line_of(const ojson& j) { return j.dump(-1, ' ', true, ojson::error_handler_t::replace); }

void emit(const ojson& j) { std::cout << line_of(j) << "\n" << std::flush; }

ojson figure(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson activity_json(bool available, const GpmFigures& f, const std::string& reason) {
  ojson j{{"available", available}};
  if (available) {
    j["sm_active"] = figure(f.sm_active);
    j["sm_occupancy"] = figure(f.sm_occupancy);
    j["dram_bw"] = figure(f.dram_bw);
    j["tensor_active"] = figure(f.tensor_active);
  }
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

constexpr const char* kMethod = "nvml_energy_counter: mean power between counter updates inside the span, times "
                                "the span";

// One GPU's figures over [begin, end].
ojson gpu_span(Gpu& g, double begin, double end, double* joules, double* power, double* weighted, double* span,
               bool* energy_ok, GpmFigures* activity, bool* activity_ok, std::string* reasons) {
  mpsb::GpuCounters& counters = g.monitor->counters();
  ojson energy{{"available", false}};
  if (!counters.energy_problem().empty()) {
    energy["reason"] = counters.energy_problem();
  } else {
    const mpsb::PowerEstimate p = mpsb::estimate_power(g.monitor->energy_reads(begin, end), begin, end, begin);
    if (p.available) {
      const double j = p.mean_power_w * (end - begin);
      energy = ojson{{"available", true}, {"joules", j}, {"mean_power_w", p.mean_power_w}, {"span_s", p.span_s},
                     {"uncertainty", p.uncertainty}, {"method", kMethod}};
      *joules += j;
      *power += p.mean_power_w;
      *weighted += p.uncertainty * j;
      *span = std::min(*span, p.span_s);
    } else {
      energy["reason"] = p.reason;
    }
  }
  if (!energy["available"].get<bool>()) {
    *energy_ok = false;
    *reasons += (reasons->empty() ? "" : "; ") + g.uuid + ": " + energy["reason"].get<std::string>();
  }
  std::string why;
  std::unique_ptr<mpsb::GpmSample> second = g.first ? counters.gpm_sample(why) : nullptr;
  GpmFigures f;
  bool ok = false;
  if (!g.first) {
    why = g.first_problem;
  } else if (second && second->time_s - g.first->time_s < 0.1) {
    why = "the span was shorter than GPM's 0.1 s between samples";
  } else if (second) {
    f = counters.gpm_figures(*g.first, *second, why);
    ok = f.sm_active || f.sm_occupancy || f.dram_bw || f.tensor_active;
  }
  if (ok) {
    *activity = f;
  } else {
    *activity_ok = false;
  }
  g.first.reset();
  return ojson{{"uuid", g.uuid}, {"index", g.index}, {"energy", energy}, {"gpu_activity", activity_json(ok, f, why)}};
}

ojson stop_span(std::vector<Gpu>& gpus, double begin, double end) {
  double joules = 0, power = 0, weighted = 0, span = 1e300;
  bool energy_ok = true, activity_ok = true;
  std::string energy_reasons;
  std::vector<GpmFigures> figures;
  ojson per_gpu = ojson::array();
  for (auto& g : gpus) {
    GpmFigures f;
    bool ok = true;
    per_gpu.push_back(gpu_span(g, begin, end, &joules, &power, &weighted, &span, &energy_ok, &f, &ok,
                               &energy_reasons));
    g.monitor->pause();
    if (ok) figures.push_back(f);
    activity_ok = activity_ok && ok;
  }
  ojson energy{{"available", energy_ok}};
  if (energy_ok) {
    energy = ojson{{"available", true}, {"joules", joules}, {"mean_power_w", power}, {"span_s", span},
                   {"uncertainty", joules > 0 ? weighted / joules : 0.0}, {"method", kMethod}};
  } else {
    energy["reason"] = energy_reasons;
  }
  GpmFigures mean;
  std::string activity_reason;
  if (activity_ok && !figures.empty()) {
    auto average = [&](std::optional<double> GpmFigures::*m) -> std::optional<double> {
      double sum = 0;
      int n = 0;
      for (const auto& f : figures) {
        if (f.*m) sum += *(f.*m), ++n;
      }
      return n ? std::optional<double>(sum / n) : std::nullopt;
    };
    mean = GpmFigures{average(&GpmFigures::sm_active), average(&GpmFigures::sm_occupancy),
                      average(&GpmFigures::dram_bw), average(&GpmFigures::tensor_active)};
  } else {
    for (const auto& g : per_gpu) {
      if (!g["gpu_activity"]["available"].get<bool>()) {
        activity_reason = g["uuid"].get<std::string>() + ": " + g["gpu_activity"].value("reason", std::string());
        break;
      }
    }
  }
  return ojson{{"span_s", end - begin}, {"energy", energy},
               {"gpu_activity", activity_json(activity_ok && !figures.empty(), mean, activity_reason)},
               {"gpus", per_gpu}};
}

bool is_stop(const std::string& line) {
  return line == "stop" || (line.rfind("stop", 0) == 0 && line.size() > 4 && (line[4] == ' ' || line[4] == '\t'));
}

// When "stop [AGO]" ends the span begun at `begin`; `why` says what is wrong with AGO (then the span stays open).
double stop_time(const std::string& line, double begin, double now, std::string& why) {
  std::string ago = line.substr(4);
  ago.erase(0, ago.find_first_not_of(" \t"));
  if (ago.empty()) return now;
  double seconds = 0;
  std::size_t used = 0;
  try {
    seconds = std::stod(ago, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string quoted = ago.size() > kQuoted ? ago.substr(0, kQuoted) + "..." : ago;
  if (used != ago.size() || !std::isfinite(seconds)) {
    why = "stop '" + quoted + "': not a number of seconds";
  } else if (seconds < 0 || seconds >= now - begin) {
    why = "stop '" + quoted + "': the span ends before this command by 0 to less than its " +
          std::to_string(now - begin) + " s";
  }
  return now - seconds;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
    } else if (!item.empty()) {
      items.push_back(item);
      item.clear();
    }
  }
  return items;
}

int not_ready(const std::string& reason) {
  emit(ojson{{"ready", false}, {"reason", reason}});
  return kExitUsage;
}

// The next line of `in` into `line`, at most kMaxLine bytes of it (the rest is read and dropped: `too_long`);
// false at the end of input. No line, however long, is held whole.
bool read_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::istream::int_type c = 0;
  bool any = false;
  while ((c = in.get()) != std::istream::traits_type::eof()) {
    any = true;
    if (c == '\n') return true;
    if (line.size() < kMaxLine) {
      line += static_cast<char>(c);
    } else {
      too_long = true;
    }
  }
  return any;
}

// The meter; `ready` is set once the ready line is out (what an unexpected error's line must then be).
int run(int argc, char** argv, bool& ready) {
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "mpsbench-meter " << mpsb::build_version() << " (git " << mpsb::build_git_commit() << ")\n";
      return 0;
    }
    if ((arg == "--gpus" && i + 1 < argc) || arg.rfind("--gpus=", 0) == 0) {
      wanted = split_commas(arg == "--gpus" ? std::string(argv[++i]) : arg.substr(7));
      // An empty list would silently meter every GPU instead of the ones meant.
      if (wanted.empty()) return not_ready("--gpus names no GPU");
    } else {
      std::cerr << "mpsbench-meter: error: unknown option " << line_of(arg) << " (see --help)\n";
      return not_ready("unknown option '" + arg + "'");
    }
  }
  std::string problem;
  const std::vector<mpsb::CounterGpu> listed = mpsb::list_counter_gpus(problem);
  std::vector<Gpu> gpus;
  if (wanted.empty()) {
    if (listed.empty()) return not_ready(problem.empty() ? "no GPU" : problem);
    for (const auto& g : listed) gpus.push_back(Gpu{g.index, g.uuid, nullptr, nullptr, ""});
  } else {
    for (const auto& uuid : wanted) {
      const auto it = std::find_if(listed.begin(), listed.end(), [&](const auto& g) { return g.uuid == uuid; });
      gpus.push_back(Gpu{it == listed.end() ? -1 : it->index, uuid, nullptr, nullptr, ""});
    }
  }
  ojson ready_gpus = ojson::array();
  for (auto& g : gpus) {
    auto counters = mpsb::open_gpu_counters(g.uuid, problem);
    if (!counters) return not_ready(problem);
    g.monitor = std::make_unique<mpsb::GpuMonitor>(std::move(counters));
    ready_gpus.push_back({{"index", g.index}, {"uuid", g.uuid}});
  }
  emit(ojson{{"ready", true}, {"gpus", ready_gpus}});
  ready = true;

  bool open = false;
  double begin = 0;
  std::string line;
  bool too_long = false;
  while (read_line(std::cin, line, too_long)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    line.erase(0, line.find_first_not_of(" \t"));
    if (too_long) {
      emit(ojson{{"error", "a line longer than " + std::to_string(kMaxLine) + " bytes (start or stop)"}});
      continue;
    }
    if (line.empty()) continue;
    if (line == "start") {
      begin = mpsb::now_seconds();
      for (auto& g : gpus) {
        g.monitor->forget_before(begin);
        g.monitor->resume();
        g.first_problem.clear();
        g.first = g.monitor->counters().gpm_sample(g.first_problem);
      }
      open = true;
    } else if (is_stop(line) && !open) {
      emit(ojson{{"error", "stop without a span (send start first)"}});
    } else if (is_stop(line)) {
      const double now = mpsb::now_seconds();
      std::string why;
      const double end = stop_time(line, begin, now, why);
      if (!why.empty()) {
        emit(ojson{{"error", why}});  // the span stays open: a good stop still ends it
        continue;
      }
      emit(stop_span(gpus, begin, end));
      open = false;
    } else {
      const std::string quoted = line.size() > kQuoted ? line.substr(0, kQuoted) + "..." : line;
      emit(ojson{{"error", "unknown command '" + quoted + "' (start or stop)"}});
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool ready = false;
  try {
    return run(argc, argv, ready);
  } catch (const std::exception& e) {  // out of memory, a thread that cannot start: one line, not an abort
    const std::string why = std::string("mpsbench-meter: ") + e.what();
    try {
      emit(ready ? ojson{{"error", why}} : ojson{{"ready", false}, {"reason", why}});
    } catch (const std::exception&) {
      // The line cannot be written either: the exit status says it.
    }
    return kExitFailed;
  }
}
