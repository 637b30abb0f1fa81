#include "results/result_files.hpp"

#include <stdexcept>

#include "runtime/atomic_file.hpp"
#include "runtime/usage_error.hpp"

namespace mpsb {

void check_resume_file(const std::string& path) {
  try {
    check_input_file(path);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--resume: ") + e.what());
  }
}

void check_result_files(const std::string& output, const std::string& resume) {
  if (!resume.empty()) check_resume_file(resume);
  // Without --output the results go back into the --resume file.
  const bool to_output = !output.empty();
  const std::string& target = to_output ? output : resume;
  if (target.empty()) return;  // a fresh default name: first_free_path never picks an existing entry
  try {
    check_output_target(target);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string(to_output ? "--output: " : "--resume: ") + e.what());
  }
}

}  // namespace mpsb
