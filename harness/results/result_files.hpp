// The files one run reads (--resume) and writes (--output): rank 0 checks
// them before any GPU work, so a target that is a link, a directory, a FIFO or
// a device is refused as bad input (exit 2) instead of being replaced by the
// results file, or discovered only after the first configuration.
#pragma once

#include <string>


namespace mpsb {

// Throws UsageError ("--resume: ...") unless `path` is an existing regular
// file (a link to one is refused too: the file is replaced at the end).
void check_resume_file(const std::string& path);

// Throws UsageError ("--output: ..." or "--resume: ...") naming the path when
// the run could not read its --resume file or write its results file
// (`output`, or without one `resume`; both empty: a fresh default name).
void check_result_files(const std::string& output, const std::string& resume);

}  // namespace mpsb
