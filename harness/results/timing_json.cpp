#include "results/timing_json.hpp"

namespace mpsb {

nlohmann::ordered_json timing_json(const ConfigTiming& t) {
  return nlohmann::ordered_json{{"setup_s", t.setup_s},
                                {"first_run_s", t.first_run_s},
                                {"warmup_s", t.warmup_s},
                                {"metering_s", t.metering_s},
                                {"repetitions_s", t.repetitions_s},
                                {"windows_s", t.windows_s},
                                {"verification_s", t.verification_s},
                                {"gather_s", t.gather_s},
                                {"report_s", t.report_s},
                                {"wall_s", t.wall_s},
                                {"instances", t.instances},
                                {"reused_instances", t.reused_instances}};
}

nlohmann::ordered_json job_timing_json(const JobTiming& t) {
  return nlohmann::ordered_json{{"mpi_init_s", t.mpi_init_s},
                                {"options_s", t.options_s},
                                {"preflight_s", t.preflight_s},
                                {"gpu_open_s", t.gpu_open_s},
                                {"placement_s", t.placement_s},
                                {"reporters_s", t.reporters_s},
                                {"clock_offset_s", t.clock_offset_s},
                                {"monitors_s", t.monitors_s},
                                {"configurations_s", t.configurations_s},
                                {"total_s", t.total_s}};
}

}  // namespace mpsb
