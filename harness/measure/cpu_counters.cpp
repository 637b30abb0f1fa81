#include "measure/cpu_counters.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mpsb {
namespace {

constexpr int kStealColumn = 8;  // user nice system idle iowait irq softirq steal

// A decimal counter; 19 digits stay below 2^64.
std::optional<std::uint64_t> number(const std::string& word) {
  const bool digits =
      std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  if (word.empty() || word.size() > 19 || !digits) return std::nullopt;
  return std::stoull(word);
}

bool read_text(const std::string& path, std::string& text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream out;
  out << in.rdbuf();
  text = out.str();
  return !text.empty();
}

// A kernel counter only grows; a smaller later value (a counter reset) counts as nothing lost.
std::uint64_t growth(std::uint64_t before, std::uint64_t after) { return after >= before ? after - before : 0; }

void add_problem(std::string& problems, const std::string& problem) {
  if (problems.find(problem) == std::string::npos) problems += (problems.empty() ? "" : "; ") + problem;
}

}  // namespace

std::map<int, std::uint64_t> steal_ticks_by_cpu(const std::string& proc_stat) {
  std::map<int, std::uint64_t> steal;
  std::istringstream lines(proc_stat);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string label;
    words >> label;
    if (label.size() <= 3 || label.compare(0, 3, "cpu") != 0) continue;
    const auto cpu = number(label.substr(3));
    if (!cpu || *cpu > 1u << 20) continue;
    std::optional<std::uint64_t> value;
    std::string word;
    int column = 0;
    bool numeric = true;
    while (column < kStealColumn && words >> word) {
      ++column;
      const auto v = number(word);
      numeric = numeric && v.has_value();
      if (column == kStealColumn) value = v;
    }
    if (numeric && value) steal[static_cast<int>(*cpu)] = *value;
  }
  return steal;
}

std::optional<std::uint64_t> run_delay_ns(const std::string& schedstat) {
  std::istringstream words(schedstat);
  std::string run, wait, slices;
  if (!(words >> run >> wait >> slices) || !number(run)) return std::nullopt;
  return number(wait);
}

CpuCounterSnapshot read_cpu_counters(const std::string& proc_root) {
  CpuCounterSnapshot s;
  s.cpu = sched_getcpu();
  if (s.cpu < 0) add_problem(s.problem, std::string("sched_getcpu failed: ") + std::strerror(errno));
  std::string text;
  const std::string stat = proc_root + "/stat";
  if (!read_text(stat, text)) {
    add_problem(s.problem, "cannot read " + stat);
  } else {
    s.steal_ticks = steal_ticks_by_cpu(text);
    if (s.steal_ticks.empty()) add_problem(s.problem, stat + " has no cpuN line with a steal column");
  }
  const std::string schedstat = proc_root + "/thread-self/schedstat";
  if (!read_text(schedstat, text)) {
    add_problem(s.problem, "cannot read " + schedstat);
  } else {
    s.run_delay_ns = run_delay_ns(text);
    if (!s.run_delay_ns) add_problem(s.problem, schedstat + " is malformed");
  }
  return s;
}

CpuLoss cpu_loss_between(const CpuCounterSnapshot& before, const CpuCounterSnapshot& after, long ticks_per_second) {
  CpuLoss loss;
  if (!before.problem.empty()) add_problem(loss.problem, before.problem);
  if (!after.problem.empty()) add_problem(loss.problem, after.problem);
  if (ticks_per_second <= 0) {
    add_problem(loss.problem, "sysconf(_SC_CLK_TCK) gave no tick length");
  } else if (before.cpu >= 0 && after.cpu >= 0) {
    std::optional<std::uint64_t> ticks;
    for (int cpu : {before.cpu, after.cpu}) {
      const auto b = before.steal_ticks.find(cpu), a = after.steal_ticks.find(cpu);
      if (b == before.steal_ticks.end() || a == after.steal_ticks.end()) {
        if (!before.steal_ticks.empty() && !after.steal_ticks.empty()) {
          add_problem(loss.problem, "no steal column for cpu" + std::to_string(cpu));
        }
        ticks.reset();
        break;
      }
      ticks = std::max(ticks.value_or(0), growth(b->second, a->second));
    }
    if (ticks) loss.steal_s = static_cast<double>(*ticks) / static_cast<double>(ticks_per_second);
  }
  if (before.run_delay_ns && after.run_delay_ns) {
    loss.run_delay_s = static_cast<double>(growth(*before.run_delay_ns, *after.run_delay_ns)) * 1e-9;
  }
  return loss;
}

}  // namespace mpsb
