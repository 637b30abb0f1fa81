// Presets are data files parsed by the real option parser; every one must
// parse, and every flag --help lists must be documented in docs/options.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "cli/presets.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

std::string error_of(const std::vector<std::string>& args) {
  return usage_error_text([&] { parse_options(args); });
}

TEST(Presets, TheFourNamedPresetsExistAndEveryPresetParses) {
  std::set<std::string> names;
  for (const auto& p : list_presets(preset_directory())) {
    names.insert(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_FALSE(p.args.empty()) << p.name;
    EXPECT_EQ(error_of({"--preset", p.name}), "") << p.name;
  }
  for (const char* required : {"quick", "workshop", "ci", "full"}) EXPECT_EQ(names.count(required), 1u) << required;
}

TEST(Presets, NameOnlyOptionsOfTheOptionTable) {
  for (const auto& p : list_presets(preset_directory())) {
    for (const auto& arg : p.args) {
      if (arg.rfind("--", 0) != 0) continue;  // a value
      const std::string flag = arg.substr(0, arg.find('='));
      const OptionSpec* spec = find_option(flag);
      ASSERT_NE(spec, nullptr) << p.name << ": " << flag;
      EXPECT_NE(spec->apply, nullptr) << p.name << ": " << flag << " cannot be in a preset";
    }
  }
}

TEST(Presets, ExpandInPlaceAndLaterFlagsOverride) {
  // The expected count is read from the preset file, so retuning the preset
  // does not need a test edit; what is checked is that the parser applies it.
  const Preset ci_file = load_preset(preset_directory(), "ci");
  const auto reps_flag = std::find(ci_file.args.begin(), ci_file.args.end(), "--repetitions");
  ASSERT_NE(reps_flag, ci_file.args.end());
  ASSERT_NE(reps_flag + 1, ci_file.args.end());
  const Options ci = parse_options({"--preset", "ci"});
  EXPECT_EQ(ci.measure.repetitions, std::stoi(*(reps_flag + 1)));
  EXPECT_NE(ci.measure.repetitions, Options{}.measure.repetitions) << "the ci preset should set a non-default repetition count";
  EXPECT_EQ(ci.plan.kernel_sizes.at("nbody"), (std::vector<std::int64_t>{65536}));
  const Options overridden = parse_options({"--preset=ci", "--repetitions", "3", "--kernel", "matmul"});
  EXPECT_EQ(overridden.measure.repetitions, 3);
  EXPECT_EQ(overridden.plan.kernels, std::vector<std::string>{"matmul"});
  const Options full = parse_options({"--preset", "full"});
  EXPECT_TRUE(full.plan.all_precisions);
}

TEST(Presets, BadPresetsAreOneLineErrors) {
  EXPECT_NE(error_of({"--preset", "nope"}).find("unknown preset 'nope' (known: "), std::string::npos);
  EXPECT_NE(error_of({"--preset", "../etc"}).find("'../etc' is not a preset name"), std::string::npos);
  EXPECT_NE(error_of({"--preset"}).find("--preset: missing value"), std::string::npos);

  char dir_template[] = "/tmp/mpsbench-presets-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::ofstream(dir + "/broken.json") << "{\"description\": \"x\", \"args\": [1, 2]}";
  std::ofstream(dir + "/nested.json") << "{\"description\": \"x\", \"args\": [\"--preset\", \"ci\"]}";
  const std::string broken = usage_error_text([&] { load_preset(dir, "broken"); });
  EXPECT_NE(broken.find("broken.json"), std::string::npos) << broken;
  EXPECT_EQ(broken.find('\n'), std::string::npos) << broken;
  EXPECT_THROW(load_preset(dir, "nested"), UsageError);
  std::remove((dir + "/broken.json").c_str());
  std::remove((dir + "/nested.json").c_str());
  std::remove(dir.c_str());
}

TEST(Help, EveryFlagInHelpIsDocumentedInTheReadme) {
  std::ifstream in(MPSBENCH_README_PATH);
  std::stringstream readme;
  readme << in.rdbuf();
  const std::string text = readme.str();
  ASSERT_FALSE(text.empty());
  const std::string usage = usage_text();
  const std::regex flag("--[a-z][a-z-]+");
  int flags = 0;
  for (auto it = std::sregex_iterator(usage.begin(), usage.end(), flag); it != std::sregex_iterator(); ++it) {
    ++flags;
    EXPECT_NE(text.find("`" + it->str()), std::string::npos) << it->str() << " is not documented in docs/options.md";
  }
  EXPECT_GT(flags, 15);
}

}  // namespace
}  // namespace mpsb
