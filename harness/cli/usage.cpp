// --help, generated from the option table: one entry per row, its help
// wrapped beside the name at column 24.
#include <sstream>

#include "cli/option_table.hpp"

namespace mpsb {
namespace {

constexpr std::size_t kHelpColumn = 24;
constexpr std::size_t kLineWidth = 80;

// "  --kernel LIST         kernels to run ..." with the help's words wrapped
// under column kHelpColumn. A head too long for its column is followed by two
// spaces and the help on the same line.
std::string usage_entry(const OptionSpec& spec) {
  std::string line = "  ";
  if (*spec.alias != '\0') line += std::string(spec.alias) + ", ";
  line += spec.name;
  if (*spec.placeholder != '\0') line += std::string(" ") + spec.placeholder;
  line += line.size() < kHelpColumn ? std::string(kHelpColumn - line.size(), ' ') : std::string("  ");
  std::string help = spec.help;
  if (*spec.shown_default != '\0') help += std::string(" (default: ") + spec.shown_default + ")";

  std::string out;
  std::istringstream words(help);
  std::string word;
  bool line_has_words = false;
  while (words >> word) {
    if (line_has_words && line.size() + 1 + word.size() > kLineWidth) {
      out += line + "\n";
      line = std::string(kHelpColumn, ' ');
      line_has_words = false;
    }
    line += (line_has_words ? " " : "") + word;
    line_has_words = true;
  }
  return out + line + "\n";
}

}  // namespace

std::string usage_text() {
  std::string text =
      "usage: mpirun -np N mpsbench [options]\n"
      "\n"
      "Measures how well N MPI ranks share the GPUs of their node: every kernel x\n"
      "precision x size x active ranks per GPU, each result verified.\n"
      "\n"
      "Lists are comma-separated; an item given twice counts once (--gpus excepted:\n"
      "a GPU listed twice is an error, since the list decides the placement).\n"
      "\n";
  for (const auto& spec : option_table()) text += usage_entry(spec);
  text +=
      "\n"
      "Exit status: 0 all results verified, 1 a verification failed or a\n"
      "configuration failed (out of memory),\n"
      "2 bad input (nothing measured), 3 fatal runtime error (job aborted).\n";
  return text;
}

}  // namespace mpsb
